import { translator } from "@/lib/i18n/translate";
import type { Locale } from "@/lib/i18n/locales";
import { PASSWORD_MAX_LENGTH, PASSWORD_MIN_LENGTH } from "@/lib/authn/password-rules";
import { PasswordInput } from "./password-input";

/**
 * A new password's field (sign-up, a reset, one in place of a breached password): its label, the
 * browser's length check, and under it the hint or, when the last one was refused, why (in the
 * hint's place, announced, and the field's description).
 */
export function NewPasswordField({ locale, label, error }: { locale: Locale; label: string; error?: string }) {
  const t = translator(locale);
  return (
    <div>
      <label htmlFor="new-password" className="block text-sm font-medium text-slate-700">
        {label}
      </label>
      <PasswordInput
        id="new-password"
        name="password"
        autoComplete="new-password"
        minLength={PASSWORD_MIN_LENGTH}
        maxLength={PASSWORD_MAX_LENGTH}
        required
        autoFocus
        aria-describedby="new-password-hint"
        aria-invalid={error ? true : undefined}
        toggleLabel={t("signIn.showPassword")}
      />
      {error ? (
        <p id="new-password-hint" role="alert" className="mt-1 text-sm text-red-700">
          {error}
        </p>
      ) : (
        <p id="new-password-hint" className="mt-1 text-xs text-slate-500">
          {t("signUp.passwordHint")}
        </p>
      )}
    </div>
  );
}
