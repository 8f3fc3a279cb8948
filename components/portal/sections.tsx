/**
 * The portal's sections. Each receives the page's view (lib/account-security/portal-view.ts) and
 * the managing sections' data (lib/account-security/manage-view.ts), and renders one part of the
 * account's security settings as plain forms (passkeys and security keys need JavaScript for the
 * browser's prompt). Phone width first: rows stack, buttons wrap.
 */
import type { PortalView } from "@/lib/account-security/portal-view";
import type { ManageView } from "@/lib/account-security/manage-view";
import type { EvidenceVerdict } from "@/lib/account-security/evidence";
import type { EnrolledFactor } from "@/lib/authn/factors/contract";
import { WebAuthnForm } from "@/components/hosted/webauthn-form";
import { inputClass, OneTimeCodeField, secondaryButtonClass } from "@/components/hosted/steps/step-form";
import { formatUtc } from "@/components/ui/time";
import { translator, type Translate } from "@/lib/i18n/translate";
import { deviceLabel } from "@/lib/user-agent";
import { deviceWords } from "@/lib/account-security/applications";
import type { Locale } from "@/lib/i18n/locales";
import { PortalSection } from "./frame";
import { PortalForm } from "./portal-form";
import { VerifySection } from "./verify";

interface SectionProps {
  view: PortalView;
  manage: ManageView;
  /** The page's language (lib/i18n). */
  locale: Locale;
}

const smallButton =
  "rounded-md border border-slate-300 bg-white px-3 py-1.5 text-xs font-semibold text-slate-800 shadow-sm hover:bg-slate-50 focus:outline-none focus:ring-2 focus:ring-indigo-300";
const dangerButton =
  "rounded-md border border-red-200 bg-white px-3 py-1.5 text-xs font-semibold text-red-700 shadow-sm hover:bg-red-50 focus:outline-none focus:ring-2 focus:ring-red-200";
const addButton = secondaryButtonClass;

/** What the page says after a successful change (`?done=`): the catalogue's key. */
export const DONE_NOTICES = {
  verified: "portal.notice.verified",
  passkey_added: "portal.notice.passkey_added",
  security_key_added: "portal.notice.security_key_added",
  authenticator_app_added: "portal.notice.authenticator_app_added",
  credential_renamed: "portal.notice.credential_renamed",
  credential_removed: "portal.notice.credential_removed",
  recovery_codes_generated: "portal.notice.recovery_codes_generated",
  application_signed_out: "portal.notice.application_signed_out",
} as const;

export function DoneNotice({ view, locale }: { view: PortalView; locale: Locale }) {
  const key = view.notice && Object.hasOwn(DONE_NOTICES, view.notice) ? DONE_NOTICES[view.notice as keyof typeof DONE_NOTICES] : undefined;
  const text = key ? translator(locale)(key) : undefined;
  return text ? (
    <p role="status" className="rounded-md border border-emerald-200 bg-emerald-50 px-3 py-2 text-sm text-emerald-800">
      {text}
    </p>
  ) : null;
}

function Dates({ factor, t }: { factor: EnrolledFactor; t: Translate }) {
  return (
    <p className="text-xs text-slate-500">
      {factor.lastUsedAt
        ? t("portal.dates.used", { added: formatUtc(factor.createdAt), used: formatUtc(factor.lastUsedAt) })
        : t("portal.dates.unused", { added: formatUtc(factor.createdAt) })}
    </p>
  );
}

/** One enrolled passkey, security key or authenticator app: its name and dates, rename (WebAuthn only) and remove. */
function FactorRow({ view, factor, removeVerdict, t }: { view: PortalView; factor: EnrolledFactor; removeVerdict: EvidenceVerdict; t: Translate }) {
  const renamable = factor.kind === "passkey" || factor.kind === "security_key";
  return (
    <li className="space-y-2 py-3">
      <div className="flex flex-wrap items-baseline justify-between gap-2">
        <span className="break-all text-sm font-medium">{factor.name}</span>
        {factor.flagged ? <span className="rounded bg-red-100 px-1.5 py-0.5 text-xs font-medium text-red-800">{t("portal.flagged")}</span> : null}
      </div>
      <Dates factor={factor} t={t} />
      {/* A passkey or security key works at the hostname it was added on (its RP ID). */}
      {factor.rpId ? <p className="text-xs text-slate-500">{t("portal.worksAt", { hostname: factor.rpId })}</p> : null}
      <div className="flex flex-wrap items-start gap-2">
        {renamable ? (
          <details className="w-full sm:w-auto">
            <summary className={`${smallButton} inline-block cursor-pointer list-none`}>{t("portal.rename")}</summary>
            <PortalForm view={view} path="/account/credentials/rename" className="mt-2 flex flex-wrap gap-2">
              <input type="hidden" name="id" value={factor.id} />
              <label className="sr-only" htmlFor={`name-${factor.id}`}>
                {t("portal.newName")}
              </label>
              <input id={`name-${factor.id}`} name="name" defaultValue={factor.name} maxLength={64} required className={`${inputClass} mt-0 min-w-0 flex-1`} />
              <button type="submit" className={smallButton}>
                {t("portal.save")}
              </button>
            </PortalForm>
          </details>
        ) : null}
        <PortalForm view={view} path="/account/credentials/remove">
          <input type="hidden" name="kind" value={factor.kind} />
          <input type="hidden" name="id" value={factor.id} />
          <button type="submit" className={dangerButton} title={removeVerdict.ok ? undefined : t("portal.confirmFirst")}>
            {t("portal.remove")}
          </button>
        </PortalForm>
      </div>
    </li>
  );
}

function FactorGroup({ title, empty, children, t }: { title: string; empty: boolean; children: React.ReactNode; t: Translate }) {
  return (
    <div className="space-y-1">
      <h3 className="text-sm font-semibold text-slate-700">{title}</h3>
      {empty ? <p className="text-sm text-slate-500">{t("portal.none")}</p> : null}
      {children}
    </div>
  );
}

/** Asks for a stronger verification when the last change needed one (the stronger changes' verdict decides which). */
function StrongerVerification({ view, manage, locale }: SectionProps) {
  if (view.error === null) return null;
  const pending = [manage.verdicts.removePhishingResistant, manage.verdicts.removePossession, manage.verdicts.recoveryCodes].find((v) => !v.ok);
  if (!pending || pending.ok || !view.addVerdict.ok) return null;
  return <VerifySection view={view} plan={pending.verify} locale={locale} />;
}

export function FactorsSection({ view, manage, locale }: SectionProps) {
  const t = translator(locale);
  const { passkeys, securityKeys, authenticatorApps } = manage.credentials;
  const webauthnForm = { basePath: view.basePath, txId: "", csrf: view.csrf };
  const canAdd = view.addVerdict.ok;
  return (
    <PortalSection title={t("portal.methods")}>
      <div className="space-y-5">
        <StrongerVerification view={view} manage={manage} locale={locale} />
        <FactorGroup title={t("portal.passkeys")} empty={passkeys.length === 0} t={t}>
          <ul className="divide-y divide-slate-100">
            {passkeys.map((f) => (
              <FactorRow key={f.id} view={view} factor={f} removeVerdict={manage.verdicts.removePhishingResistant} t={t} />
            ))}
          </ul>
          {canAdd && manage.creation.passkey ? (
            <WebAuthnForm
              {...webauthnForm}
              path="/account/webauthn/register"
              ceremony="create"
              kind="passkey"
              optionsJSON={manage.creation.passkey}
              label={t("passkey.add")}
              failedMessage={t("portal.passkeyFailed")}
              unsupportedMessage={t("passkey.cannotCreate")}
            />
          ) : null}
        </FactorGroup>

        <FactorGroup title={t("portal.securityKeys")} empty={securityKeys.length === 0} t={t}>
          <ul className="divide-y divide-slate-100">
            {securityKeys.map((f) => (
              <FactorRow key={f.id} view={view} factor={f} removeVerdict={manage.verdicts.removePhishingResistant} t={t} />
            ))}
          </ul>
          {canAdd && manage.creation.securityKey ? (
            <WebAuthnForm
              {...webauthnForm}
              path="/account/webauthn/register"
              ceremony="create"
              kind="security_key"
              optionsJSON={manage.creation.securityKey}
              label={t("passkey.addSecurityKey")}
              failedMessage={t("portal.securityKeyFailed")}
              unsupportedMessage={t("portal.securityKeyUnsupported")}
            />
          ) : null}
        </FactorGroup>

        <FactorGroup title={t("portal.authenticatorApps")} empty={authenticatorApps.length === 0 && !manage.pendingApp} t={t}>
          <ul className="divide-y divide-slate-100">
            {authenticatorApps.map((f) => (
              <FactorRow key={f.id} view={view} factor={f} removeVerdict={manage.verdicts.removePossession} t={t} />
            ))}
          </ul>
          {manage.pendingApp ? (
            <div className="space-y-3 rounded-md border border-slate-200 p-3">
              <p className="text-sm text-slate-700">{t("portal.scan")}</p>
              {/* eslint-disable-next-line @next/next/no-img-element -- a data: URL rendered on the server */}
              <img src={manage.pendingApp.qrSvg} alt={t("mfa.qrAlt")} className="mx-auto h-44 w-44" />
              <p className="text-center text-xs text-slate-500">
                {t("portal.cantScan")} <code className="break-all font-mono text-slate-800">{manage.pendingApp.secret}</code>
              </p>
              <PortalForm view={view} path="/account/authenticator-app/confirm">
                <OneTimeCodeField id="portal-totp-code" label={t("mfa.appCode")} />
                <button type="submit" className={addButton}>
                  {t("portal.addApp")}
                </button>
              </PortalForm>
              <PortalForm view={view} path="/account/authenticator-app/cancel">
                <button type="submit" className={smallButton}>
                  {t("portal.cancel")}
                </button>
              </PortalForm>
            </div>
          ) : canAdd ? (
            <PortalForm view={view} path="/account/authenticator-app/start">
              <button type="submit" className={addButton}>
                {t("portal.addAnApp")}
              </button>
            </PortalForm>
          ) : null}
        </FactorGroup>
        {!canAdd ? <p className="text-sm text-slate-500">{t("portal.confirmToAdd")}</p> : null}
      </div>
    </PortalSection>
  );
}

export function RecoveryCodesSection({ view, manage, locale }: SectionProps) {
  const t = translator(locale);
  const set = manage.credentials.recoveryCodes;
  return (
    <PortalSection title={t("recovery.listLabel")}>
      {manage.newRecoveryCodes ? (
        <div className="space-y-3 rounded-md border border-amber-200 bg-amber-50 p-3">
          <p className="text-sm text-amber-900">{t("portal.recovery.save")}</p>
          <ol className="grid grid-cols-1 gap-1 font-mono text-sm sm:grid-cols-2">
            {manage.newRecoveryCodes.map((code) => (
              <li key={code} className="break-all">
                {code}
              </li>
            ))}
          </ol>
          <PortalForm view={view} path="/account/recovery-codes/saved">
            <button type="submit" className={addButton}>
              {t("portal.recovery.saved")}
            </button>
          </PortalForm>
        </div>
      ) : null}
      <p className="mb-3 text-sm text-slate-600">
        {set ? t("portal.recovery.left", { remaining: set.remaining, total: set.total, date: formatUtc(set.createdAt) }) : t("portal.recovery.none")}{" "}
        {t("portal.recovery.explain")}
      </p>
      <PortalForm view={view} path="/account/recovery-codes">
        <button type="submit" className={addButton} title={manage.verdicts.recoveryCodes.ok ? undefined : t("portal.confirmFirst")}>
          {set ? t("portal.recovery.replace") : t("portal.recovery.create")}
        </button>
      </PortalForm>
    </PortalSection>
  );
}

export function ApplicationSessionsSection({ view, manage, locale }: SectionProps) {
  const t = translator(locale);
  const apps = manage.applications;
  return (
    <PortalSection title={t("portal.sessions.title")}>
      {apps.length === 0 ? (
        <p className="text-sm text-slate-600">{t("portal.sessions.none")}</p>
      ) : (
        <ul className="divide-y divide-slate-100">
          {apps.map((a) => (
            <li key={a.grantId} className="space-y-1 py-3">
              <div className="flex flex-wrap items-baseline justify-between gap-2">
                <span className="break-all text-sm font-medium">{a.applicationName}</span>
                {a.current ? <span className="rounded bg-indigo-50 px-1.5 py-0.5 text-xs font-medium text-indigo-700">{t("portal.sessions.current")}</span> : null}
              </div>
              <p className="text-xs text-slate-500">
                {t("portal.sessions.dates", { used: formatUtc(a.lastUsedAt), signedIn: formatUtc(a.signedInAt) })}
              </p>
              <p className="break-all text-xs text-slate-500">
                {a.device ? deviceLabel(a.device, deviceWords(t)) : t("portal.sessions.unknownDevice")} · {a.address ?? t("portal.sessions.unknownAddress")}
              </p>
              <PortalForm view={view} path="/account/applications/sign-out">
                <input type="hidden" name="grant" value={a.grantId} />
                <button type="submit" className={dangerButton}>
                  {t("portal.sessions.signOut")}
                </button>
              </PortalForm>
              {a.current ? <p className="text-xs text-slate-500">{t("portal.sessions.signOutNote")}</p> : null}
            </li>
          ))}
        </ul>
      )}
    </PortalSection>
  );
}

export function SecurityAlertsSection({ manage, locale }: SectionProps) {
  const t = translator(locale);
  if (manage.alerts.length === 0) {
    return (
      <PortalSection title={t("portal.alerts.title")}>
        <p className="text-sm text-slate-600">{t("portal.alerts.none")}</p>
      </PortalSection>
    );
  }
  return (
    <PortalSection title={t("portal.alerts.title")}>
      <ul className="space-y-2">
        {manage.alerts.map((a) => (
          <li key={a.id} role="alert" className="rounded-md border border-red-200 bg-red-50 px-3 py-2 text-sm text-red-900">
            <p className="font-medium">{t("portal.alerts.stolen", { application: a.applicationName ?? a.clientId ?? t("portal.alerts.anApplication") })}</p>
            <p className="text-xs">
              {t("portal.alerts.from", { date: formatUtc(a.at), address: a.address ?? t("portal.alerts.unknownAddress") })}
            </p>
            <p className="mt-1 text-xs">
              {t("portal.alerts.explain")}
            </p>
          </li>
        ))}
      </ul>
    </PortalSection>
  );
}
