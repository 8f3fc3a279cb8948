/**
 * The invitations' own words, in every language of the hosted pages and emails (LocalizedText: the
 * type check fails until each has it): the invitation email and the acceptance page. The email is
 * rendered as the other hosted messages are (lib/authn/email/templates.ts): plain text and HTML of
 * the same words, naming the workspace, in the inviter's request language unless the account's is known.
 */
import type { MailMessage } from "../../authn/email/outbox";
import type { Locale, LocalizedText } from "../../i18n/locales";

const TEXT = {
  subject: {
    en: "Invitation to join {organization} in {workspace}",
    de: "Einladung zu {organization} in {workspace}",
    fr: "Invitation à rejoindre {organization} dans {workspace}",
  },
  intro: {
    en: "You are invited to join the organization {organization} in {workspace}.",
    de: "Sie sind eingeladen, der Organisation {organization} in {workspace} beizutreten.",
    fr: "Vous êtes invité à rejoindre l'organisation {organization} dans {workspace}.",
  },
  introAdministrator: {
    en: "You are invited to join the organization {organization} in {workspace}, as one of its administrators.",
    de: "Sie sind eingeladen, der Organisation {organization} in {workspace} als Administrator beizutreten.",
    fr: "Vous êtes invité à rejoindre l'organisation {organization} dans {workspace} en tant qu'administrateur.",
  },
  open: {
    en: "Open this link to accept:",
    de: "Öffnen Sie diesen Link, um die Einladung anzunehmen:",
    fr: "Ouvrez ce lien pour accepter :",
  },
  expires: {
    en: "The link can be used once, only for this address, and expires {time}. Do not forward it: whoever opens it accepts as you.",
    de: "Der Link kann einmal und nur für diese Adresse verwendet werden und läuft am {time} ab. Leiten Sie ihn nicht weiter: Wer ihn öffnet, nimmt in Ihrem Namen an.",
    fr: "Le lien ne peut être utilisé qu'une fois, pour cette adresse seulement, et expire le {time}. Ne le transférez pas : quiconque l'ouvre accepte en votre nom.",
  },
  ignore: {
    en: "If you did not expect this invitation, ignore this message: nothing happens unless the link is used.",
    de: "Wenn Sie diese Einladung nicht erwartet haben, ignorieren Sie diese Nachricht: Ohne den Link geschieht nichts.",
    fr: "Si vous n'attendiez pas cette invitation, ignorez ce message : rien ne se passe sans le lien.",
  },

  // The acceptance page (app/t/[tenant]/invitation).
  pageTitle: { en: "Invitation", de: "Einladung", fr: "Invitation" },
  title: { en: "Join {organization}", de: "{organization} beitreten", fr: "Rejoindre {organization}" },
  invitedAs: {
    en: "This invitation is for {email}.",
    de: "Diese Einladung gilt für {email}.",
    fr: "Cette invitation est destinée à {email}.",
  },
  asAdministrator: {
    en: "You will be an administrator of the organization: you can invite others to it.",
    de: "Sie werden Administrator der Organisation und können weitere Personen einladen.",
    fr: "Vous serez administrateur de l'organisation : vous pourrez y inviter d'autres personnes.",
  },
  existing: {
    en: "Accepting adds your account to the organization. You then sign in as you always do.",
    de: "Mit der Annahme wird Ihr Konto der Organisation hinzugefügt. Danach melden Sie sich wie gewohnt an.",
    fr: "En acceptant, votre compte est ajouté à l'organisation. Vous vous connectez ensuite comme d'habitude.",
  },
  sso: {
    en: "{organization} signs its members in through its own single sign-on. Accepting creates your account; you then sign in with your organization's account, with no password here.",
    de: "{organization} meldet ihre Mitglieder über ihr eigenes Single Sign-on an. Mit der Annahme wird Ihr Konto erstellt; danach melden Sie sich mit dem Konto Ihrer Organisation an, ohne Passwort hier.",
    fr: "{organization} connecte ses membres par sa propre authentification unique. En acceptant, votre compte est créé ; vous vous connectez ensuite avec le compte de votre organisation, sans mot de passe ici.",
  },
  choosePassword: {
    en: "Choose a password for your new account.",
    de: "Wählen Sie ein Passwort für Ihr neues Konto.",
    fr: "Choisissez un mot de passe pour votre nouveau compte.",
  },
  passwordOptional: {
    en: "Choose a password for your new account, or leave it empty to sign in with a code sent to this address.",
    de: "Wählen Sie ein Passwort für Ihr neues Konto, oder lassen Sie das Feld leer, um sich mit einem an diese Adresse gesendeten Code anzumelden.",
    fr: "Choisissez un mot de passe pour votre nouveau compte, ou laissez le champ vide pour vous connecter avec un code envoyé à cette adresse.",
  },
  password: { en: "Password", de: "Passwort", fr: "Mot de passe" },
  accept: { en: "Accept invitation", de: "Einladung annehmen", fr: "Accepter l'invitation" },
  acceptedTitle: { en: "Welcome to {organization}", de: "Willkommen bei {organization}", fr: "Bienvenue dans {organization}" },
  accepted: {
    en: "You accepted the invitation: {email} is now a member of {organization}.",
    de: "Sie haben die Einladung angenommen: {email} ist jetzt Mitglied von {organization}.",
    fr: "Vous avez accepté l'invitation : {email} est maintenant membre de {organization}.",
  },
  acceptedSso: {
    en: "Sign in with your organization's account: enter your address at the sign-in and you are sent to {organization}'s sign-in.",
    de: "Melden Sie sich mit dem Konto Ihrer Organisation an: Geben Sie bei der Anmeldung Ihre Adresse ein, und Sie werden zur Anmeldung von {organization} weitergeleitet.",
    fr: "Connectez-vous avec le compte de votre organisation : saisissez votre adresse à la connexion et vous serez dirigé vers la connexion de {organization}.",
  },
  acceptedPasswordDiscarded: {
    en: "A password set on this account before its address was proven was removed, and its sessions ended. Sign in with a code sent to this address, or reset the password.",
    de: "Ein Passwort, das vor dem Nachweis der Adresse für dieses Konto festgelegt wurde, wurde entfernt, und seine Sitzungen wurden beendet. Melden Sie sich mit einem an diese Adresse gesendeten Code an oder setzen Sie das Passwort zurück.",
    fr: "Un mot de passe défini sur ce compte avant la preuve de son adresse a été supprimé et ses sessions ont été fermées. Connectez-vous avec un code envoyé à cette adresse, ou réinitialisez le mot de passe.",
  },
  continueTo: { en: "Continue to {application}", de: "Weiter zu {application}", fr: "Continuer vers {application}" },

  // The page's errors (`?error=`).
  "error.weak_password": {
    en: "Choose a password of at least {min} characters.",
    de: "Wählen Sie ein Passwort mit mindestens {min} Zeichen.",
    fr: "Choisissez un mot de passe d'au moins {min} caractères.",
  },
  "error.password_common": {
    en: "This password is too common. Choose another one.",
    de: "Dieses Passwort ist zu verbreitet. Wählen Sie ein anderes.",
    fr: "Ce mot de passe est trop courant. Choisissez-en un autre.",
  },
  "error.password_breached": {
    en: "This password appeared in a data breach. Choose another one.",
    de: "Dieses Passwort ist in einem Datenleck aufgetaucht. Wählen Sie ein anderes.",
    fr: "Ce mot de passe est apparu dans une fuite de données. Choisissez-en un autre.",
  },
  "error.password_guessable": {
    en: "This password is too easy to guess. Choose a longer or less predictable one.",
    de: "Dieses Passwort ist zu leicht zu erraten. Wählen Sie ein längeres oder weniger vorhersehbares.",
    fr: "Ce mot de passe est trop facile à deviner. Choisissez-en un plus long ou moins prévisible.",
  },
  "error.busy": {
    en: "Too many attempts right now. Wait a moment and try again.",
    de: "Gerade zu viele Versuche. Warten Sie einen Moment und versuchen Sie es erneut.",
    fr: "Trop de tentatives pour le moment. Patientez un instant et réessayez.",
  },
} as const satisfies Record<string, LocalizedText>;

export type InvitationTextKey = keyof typeof TEXT;

/** One text in `locale`, with its `{name}` parameters filled. */
export function invitationText(locale: Locale, key: InvitationTextKey, params: Record<string, string | number> = {}): string {
  return TEXT[key][locale].replace(/\{(\w+)\}/g, (whole, name: string) => (Object.hasOwn(params, name) ? String(params[name]) : whole));
}

const escapeHtml = (value: string) => value.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);

/** "6 December 2026 at 12:00 UTC", in the message's language. */
const utc = (at: Date, locale: Locale) => `${new Intl.DateTimeFormat(locale, { dateStyle: "long", timeStyle: "short", timeZone: "UTC" }).format(at)} UTC`;

/** The invitation email: the organization, the workspace, the link (once, as an anchor in HTML), when it expires. */
export function invitationMessage(p: { to: string; locale: Locale; organization: string; workspace: string; administrator: boolean; url: string; expiresAt: Date }): MailMessage {
  const v = { organization: p.organization, workspace: p.workspace, time: utc(p.expiresAt, p.locale) };
  const t = (key: InvitationTextKey) => invitationText(p.locale, key, v);
  const intro = t(p.administrator ? "introAdministrator" : "intro");
  const paragraphs = [intro, t("open"), p.url, t("expires"), t("ignore")];
  const para = (line: string) => `<p style="margin:0 0 16px">${line}</p>`;
  const html =
    `<!doctype html><html lang="${p.locale}"><body style="font-family:-apple-system,Segoe UI,Roboto,Helvetica,Arial,sans-serif;font-size:15px;line-height:1.5;color:#0f172a">` +
    para(escapeHtml(intro)) +
    para(escapeHtml(t("open"))) +
    para(`<a href="${escapeHtml(p.url)}">${escapeHtml(p.url)}</a>`) +
    para(escapeHtml(t("expires"))) +
    para(escapeHtml(t("ignore"))) +
    `</body></html>`;
  return { to: p.to, subject: t("subject"), text: paragraphs.join("\n\n") + "\n", html };
}
