import type { SignInView } from "@/lib/sign-in/view";
import { translator } from "@/lib/i18n/translate";
import { Divider, inputClass, secondaryButtonClass, StepForm, STRONG_MARK, WithStrong, type Separator } from "./step-form";

type View = Extract<SignInView, { kind: "step" }>;

/**
 * The application's social providers, one button each in the administrator's order, and "single
 * sign-on" by work email (home-realm discovery). Plain forms: no JavaScript needed.
 */
export function FederationOptions({ view, separator }: { view: View; separator: Separator }) {
  const { buttons, sso } = view.federation;
  if (buttons.length === 0 && !sso) return null;
  const t = translator(view.locale);
  const form = { basePath: view.basePath, txId: view.txId, csrf: view.csrf };
  return (
    <div className={separator === "gap" ? "mt-3" : undefined}>
      {separator === "or" ? <Divider label={t("signIn.or")} /> : null}
      <div className="space-y-2">
        {buttons.map((b) => (
          <StepForm key={b.key} {...form} path="/sign-in/federation" className="">
            <input type="hidden" name="provider" value={b.key} />
            <button type="submit" className={secondaryButtonClass}>
              {t("federation.continueWith", { provider: b.name })}
            </button>
          </StepForm>
        ))}
      </div>
      {sso ? (
        <details className="mt-3 text-sm">
          <summary className="cursor-pointer font-medium text-indigo-700 hover:underline">{t("federation.sso")}</summary>
          <StepForm {...form} path="/sign-in/sso" className="mt-3 space-y-3">
            <div>
              <label htmlFor="sso-email" className="block text-sm font-medium text-slate-700">
                {t("federation.workEmail")}
              </label>
              <input id="sso-email" name="email" type="email" autoComplete="email" required className={inputClass} />
            </div>
            <button type="submit" className={secondaryButtonClass}>
              {t("federation.continueSso")}
            </button>
          </StepForm>
        </details>
      ) : null}
    </div>
  );
}

/** Shown while an upstream identity waits to be linked: prove the account with this email, or cancel. */
export function LinkAccountNotice({ view }: { view: View }) {
  const linking = view.federation.linking;
  if (!linking) return null;
  const t = translator(view.locale);
  return (
    <div className="mb-4 rounded-md border border-amber-200 bg-amber-50 px-3 py-3 text-sm text-amber-900" role="status">
      <p>
        <WithStrong text={t("federation.linkNotice", { email: STRONG_MARK, provider: linking.provider })} strong={linking.email} className="" />
      </p>
      <StepForm basePath={view.basePath} txId={view.txId} csrf={view.csrf} path="/sign-in/federation/cancel" className="mt-2">
        <button type="submit" className="font-medium text-amber-900 underline">
          {t("federation.cancelLink")}
        </button>
      </StepForm>
    </div>
  );
}
