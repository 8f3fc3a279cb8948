import type { SignInView } from "@/lib/sign-in/view";
import { translator } from "@/lib/i18n/translate";
import { FormError, primaryButtonClass, StepForm } from "./step-form";

type View = Extract<SignInView, { kind: "step" }>;

/** The recovery codes, shown once after the first second factor is set up. */
export function RecoveryCodes({ view, error }: { view: View; error?: string }) {
  const t = translator(view.locale);
  const codes = view.totp.recoveryCodes ?? [];
  const form = { basePath: view.basePath, txId: view.txId, csrf: view.csrf };
  const download = `data:text/plain;charset=utf-8,${encodeURIComponent(`${t("recovery.fileHeading", { account: view.userEmail ?? t("recovery.yourAccount"), workspace: view.workspaceName })}\n\n${codes.join("\n")}\n`)}`;
  return (
    <div className="space-y-4">
      <FormError message={error} />
      <p className="text-sm text-slate-600">
        {t("recovery.intro")}
      </p>
      <ol aria-label={t("recovery.listLabel")} className="grid grid-cols-1 gap-1 rounded-md bg-slate-50 p-3 font-mono text-sm text-slate-800">
        {codes.map((code) => (
          <li key={code}>
            <code>{code}</code>
          </li>
        ))}
      </ol>
      <p className="text-center text-sm">
        <a href={download} download="recovery-codes.txt" className="font-medium text-indigo-600 hover:text-indigo-500">
          {t("recovery.download")}
        </a>
      </p>
      <StepForm {...form} path="/sign-in/recovery-codes/saved">
        <button type="submit" className={primaryButtonClass}>
          {t("recovery.saved")}
        </button>
      </StepForm>
    </div>
  );
}
