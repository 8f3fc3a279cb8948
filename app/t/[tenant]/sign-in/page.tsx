import type { Metadata } from "next";
import { headers } from "next/headers";
import { notFound } from "next/navigation";
import { hostedErrorText, NEW_PASSWORD_ERRORS, signInFormMessage } from "@/lib/hosted/errors";
import { negotiateLocale } from "@/lib/i18n/locales";
import { translator } from "@/lib/i18n/translate";
import { signInView } from "@/lib/sign-in/view";
import { handedView } from "@/lib/sign-in/handed-view";
import { REQUEST_ID_HEADER } from "@/lib/http/request-id";
import { requestContext } from "@/lib/server/router";
import { getService } from "@/lib/service";
import { HostedCard } from "@/components/hosted/hosted-card";
import { FirstFactor } from "@/components/hosted/steps/first-factor";
import { SecondFactor } from "@/components/hosted/steps/second-factor";
import { EnrollSecondFactor } from "@/components/hosted/steps/enroll-second-factor";
import { RecoveryCodes } from "@/components/hosted/steps/recovery-codes";
import { PasskeyOffer } from "@/components/hosted/steps/passkey-offer";
import { EmailCodeEntry } from "@/components/hosted/steps/email-code";
import { SignUpCredential, SignUpStart } from "@/components/hosted/steps/sign-up";
import { NewPassword, PasswordChanged, ResetStart } from "@/components/hosted/steps/password-reset";
import { primaryButtonClass } from "@/components/hosted/steps/step-form";
import { RECOVERY_CODES_FACTOR } from "@/lib/authn/factors/recovery-codes";
import { BotChallenge } from "@/components/hosted/bot-challenge";

export const dynamic = "force-dynamic";

/** The page's language: the browser's Accept-Language (lib/i18n), as for the hosted error pages and emails. */
async function pageLocale() {
  return negotiateLocale((await headers()).get("accept-language"));
}

export async function generateMetadata(): Promise<Metadata> {
  return { title: translator(await pageLocale())("signIn.pageTitle"), robots: { index: false } };
}

/** The hosted sign-in: one page, showing the step the sign-in is at (lib/sign-in/flow.ts). */
export default async function SignInPage(props: { params: Promise<{ tenant: string }>; searchParams: Promise<Record<string, string | string[] | undefined>> }) {
  const [{ tenant }, query] = await Promise.all([props.params, props.searchParams]);
  const service = await getService();
  // The workspace as served at the host this request came to (its own hostname or the default host).
  const ctx = await requestContext(service, await headers(), tenant);
  if (!ctx) notFound();
  const { workspace } = ctx;
  const tx = typeof query.tx === "string" ? query.tx : "";
  const locale = await pageLocale();
  const t = translator(locale);
  // The view the listener computed for this request, when it did (lib/server/sign-in-page.ts): the page shows what its template is keyed by.
  const view = handedView((await headers()).get(REQUEST_ID_HEADER)) ?? (await signInView(ctx, tx, (await headers()).get("cookie"), locale, await headers()));
  if (view.kind === "completed") {
    // Back (or a reload) after a finished sign-in: done, not "expired"; the way back is a registered address only.
    return (
      <HostedCard title={t("signIn.completed.title")} workspaceName={view.workspaceName}>
        <p className="text-sm text-slate-600">{t("signIn.completed.body", { application: view.applicationName })}</p>
        {view.returnTo ? (
          <a href={view.returnTo} className={`mt-6 block text-center ${primaryButtonClass}`}>
            {t("signIn.completed.back", { application: view.applicationName })}
          </a>
        ) : null}
      </HostedCard>
    );
  }
  if (view.kind === "expired") {
    const expired = hostedErrorText("sign_in_link_expired", { locale });
    return (
      <HostedCard title={expired.title} workspaceName={workspace.name}>
        <p className="text-sm text-slate-600">{expired.message}</p>
      </HostedCard>
    );
  }
  // Only the codes the form shows (lib/hosted/errors.ts); any other value shows nothing.
  const error = signInFormMessage(query.error, locale);
  // After a failed password or code request the form shows the address again (kept on the transaction, not in the URL).
  const typedEmail = ["invalid_credentials", "rate_limited", "invalid_email", "code_resend_wait"].includes(String(query.error)) ? view.enteredEmail : null;
  const step = view.step;
  // The first step's email-code, sign-up and password-reset forms (lib/sign-in/steps/email.ts, lib/sign-in/sign-up.ts, lib/sign-in/steps/password-reset.ts).
  const signUp = view.email.signUp;
  const reset = view.passwordReset;
  const firstForm =
    step.kind !== "first_factor"
      ? null
      : signUp.verifiedAddress
        ? "sign_up_credential"
        : signUp.codeSentTo
          ? "sign_up_code"
          : view.email.codeSentTo
            ? "sign_in_code"
            : reset.codeSentTo
              ? "reset_code"
              : query.reset === "1" && reset.available
                ? "reset"
                : query.sign_up === "1" && signUp.available
                  ? "sign_up"
                  : null;
  const application = { application: view.applicationName };
  const firstFormTitle = {
    sign_in_code: t("signIn.title.checkEmail"),
    sign_up_code: t("signIn.title.checkEmail"),
    sign_up: t("signIn.title.signUp", application),
    sign_up_credential: t("signIn.title.chooseCredential"),
    reset_code: t("signIn.title.checkEmail"),
    reset: t("signIn.title.resetPassword"),
  } as const;
  const title = firstForm
    ? firstFormTitle[firstForm]
    : step.kind === "first_factor"
      ? t("signIn.title.signIn", application)
      : step.kind === "second_factor"
        ? t("signIn.title.secondFactor")
        : step.kind === "enroll_second_factor"
          ? t("signIn.title.enroll")
          : step.kind === RECOVERY_CODES_FACTOR.shownOnce
            ? t("signIn.title.recoveryCodes")
            : step.kind === "passkey_offer"
              ? t("signIn.title.passkeyOffer")
              : step.kind === "new_password"
                ? t("signIn.title.newPassword")
                : step.kind === "password_changed"
                  ? t("signIn.title.passwordChanged")
                  : t("signIn.title.signIn", application);
  return (
    <HostedCard title={title} workspaceName={view.workspaceName}>
      {view.botChallenge ? <BotChallenge challenge={view.botChallenge} working={t("bot.working")} done={t("bot.done")} noScript={t("bot.noScript")} /> : null}
      {view.userEmail && step.kind !== "first_factor" ? <p className="-mt-4 mb-4 text-sm text-slate-500">{view.userEmail}</p> : null}
      {step.kind === "second_factor" && view.resetting ? <p className="mb-4 text-sm text-slate-600">{t("reset.confirmFirst")}</p> : null}
      {step.kind === "second_factor" ? (
        <SecondFactor view={view} error={error} />
      ) : step.kind === "new_password" ? (
        <NewPassword view={view} error={error} passwordRefused={(NEW_PASSWORD_ERRORS as readonly unknown[]).includes(query.error)} />
      ) : step.kind === "password_changed" ? (
        <PasswordChanged view={view} />
      ) : step.kind === "enroll_second_factor" ? (
        <EnrollSecondFactor view={view} error={error} />
      ) : step.kind === RECOVERY_CODES_FACTOR.shownOnce ? (
        <RecoveryCodes view={view} error={error} />
      ) : step.kind === "passkey_offer" ? (
        <PasskeyOffer view={view} error={error} />
      ) : firstForm === "sign_in_code" || firstForm === "sign_up_code" || firstForm === "reset_code" ? (
        <EmailCodeEntry view={view} purpose={firstForm === "sign_up_code" ? "sign_up" : firstForm === "reset_code" ? "reset" : "sign_in"} error={error} />
      ) : firstForm === "reset" ? (
        <ResetStart view={view} error={error} />
      ) : firstForm === "sign_up" ? (
        <SignUpStart view={view} error={error} />
      ) : firstForm === "sign_up_credential" ? (
        <SignUpCredential view={view} error={error} passwordRefused={(NEW_PASSWORD_ERRORS as readonly unknown[]).includes(query.error)} />
      ) : (
        <FirstFactor view={view} error={error} email={typedEmail} />
      )}
    </HostedCard>
  );
}
