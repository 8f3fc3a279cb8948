import type { SignInView } from "@/lib/sign-in/view";
import { Divider, inputClass, secondaryButtonClass, StepForm } from "./step-form";

type View = Extract<SignInView, { kind: "step" }>;

/**
 * The application's social providers, one button each in the administrator's order, and "single
 * sign-on" by work email (home-realm discovery). Plain forms: no JavaScript needed.
 */
export function FederationOptions({ view, divider }: { view: View; divider: boolean }) {
  const { buttons, sso } = view.federation;
  if (buttons.length === 0 && !sso) return null;
  const form = { basePath: view.basePath, txId: view.txId, csrf: view.csrf };
  return (
    <div>
      {divider ? <Divider /> : null}
      <div className="space-y-2">
        {buttons.map((b) => (
          <StepForm key={b.key} {...form} path="/sign-in/federation" className="">
            <input type="hidden" name="provider" value={b.key} />
            <button type="submit" className={secondaryButtonClass}>
              Continue with {b.name}
            </button>
          </StepForm>
        ))}
      </div>
      {sso ? (
        <details className="mt-3 text-sm">
          <summary className="cursor-pointer font-medium text-indigo-700 hover:underline">Sign in with single sign-on (SSO)</summary>
          <StepForm {...form} path="/sign-in/sso" className="mt-3 space-y-3">
            <div>
              <label htmlFor="sso-email" className="block text-sm font-medium text-slate-700">
                Work email
              </label>
              <input id="sso-email" name="email" type="email" autoComplete="email" required className={inputClass} />
            </div>
            <button type="submit" className={secondaryButtonClass}>
              Continue with single sign-on
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
  return (
    <div className="mb-4 rounded-md border border-amber-200 bg-amber-50 px-3 py-3 text-sm text-amber-900" role="status">
      <p>
        An account with <strong>{linking.email}</strong> already exists. To sign in with {linking.provider} from now on, sign in to that account once below: it
        is linked only after you do.
      </p>
      <StepForm basePath={view.basePath} txId={view.txId} csrf={view.csrf} path="/sign-in/federation/cancel" className="mt-2">
        <button type="submit" className="font-medium text-amber-900 underline">
          Cancel and sign in another way
        </button>
      </StepForm>
    </div>
  );
}
