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
import { inputClass, secondaryButtonClass } from "@/components/hosted/steps/step-form";
import { formatUtc } from "@/components/ui/time";
import { PortalSection } from "./frame";
import { PortalForm } from "./portal-form";
import { VerifySection } from "./verify";

interface SectionProps {
  view: PortalView;
  manage: ManageView;
}

const smallButton =
  "rounded-md border border-slate-300 bg-white px-3 py-1.5 text-xs font-semibold text-slate-800 shadow-sm hover:bg-slate-50 focus:outline-none focus:ring-2 focus:ring-indigo-300";
const dangerButton =
  "rounded-md border border-red-200 bg-white px-3 py-1.5 text-xs font-semibold text-red-700 shadow-sm hover:bg-red-50 focus:outline-none focus:ring-2 focus:ring-red-200";
const addButton = secondaryButtonClass;

/** What the page says after a successful change (`?done=`). */
export const DONE_NOTICES: Record<string, string> = {
  verified: "Thanks, you are confirmed for 10 minutes.",
  passkey_added: "Passkey added.",
  security_key_added: "Security key added.",
  authenticator_app_added: "Authenticator app added.",
  credential_renamed: "Renamed.",
  credential_removed: "Removed.",
  recovery_codes_generated: "New recovery codes created. Your old codes no longer work.",
  application_signed_out: "Signed out of the application.",
};

export function DoneNotice({ view }: { view: PortalView }) {
  const text = view.notice ? DONE_NOTICES[view.notice] : undefined;
  return text ? (
    <p role="status" className="rounded-md border border-emerald-200 bg-emerald-50 px-3 py-2 text-sm text-emerald-800">
      {text}
    </p>
  ) : null;
}

function Dates({ factor }: { factor: EnrolledFactor }) {
  return (
    <p className="text-xs text-slate-500">
      Added {formatUtc(factor.createdAt)} · {factor.lastUsedAt ? `last used ${formatUtc(factor.lastUsedAt)}` : "never used"}
    </p>
  );
}

/** One enrolled passkey, security key or authenticator app: its name and dates, rename (WebAuthn only) and remove. */
function FactorRow({ view, factor, removeVerdict }: { view: PortalView; factor: EnrolledFactor; removeVerdict: EvidenceVerdict }) {
  const renamable = factor.kind === "passkey" || factor.kind === "security_key";
  return (
    <li className="space-y-2 py-3">
      <div className="flex flex-wrap items-baseline justify-between gap-2">
        <span className="break-all text-sm font-medium">{factor.name}</span>
        {factor.flagged ? <span className="rounded bg-red-100 px-1.5 py-0.5 text-xs font-medium text-red-800">refused: may have been copied</span> : null}
      </div>
      <Dates factor={factor} />
      <div className="flex flex-wrap items-start gap-2">
        {renamable ? (
          <details className="w-full sm:w-auto">
            <summary className={`${smallButton} inline-block cursor-pointer list-none`}>Rename</summary>
            <PortalForm view={view} path="/account/credentials/rename" className="mt-2 flex flex-wrap gap-2">
              <input type="hidden" name="id" value={factor.id} />
              <label className="sr-only" htmlFor={`name-${factor.id}`}>
                New name
              </label>
              <input id={`name-${factor.id}`} name="name" defaultValue={factor.name} maxLength={64} required className={`${inputClass} mt-0 min-w-0 flex-1`} />
              <button type="submit" className={smallButton}>
                Save
              </button>
            </PortalForm>
          </details>
        ) : null}
        <PortalForm view={view} path="/account/credentials/remove">
          <input type="hidden" name="kind" value={factor.kind} />
          <input type="hidden" name="id" value={factor.id} />
          <button type="submit" className={dangerButton} title={removeVerdict.ok ? undefined : "You will be asked to confirm it's you first"}>
            Remove
          </button>
        </PortalForm>
      </div>
    </li>
  );
}

function FactorGroup({ title, empty, children }: { title: string; empty: boolean; children: React.ReactNode }) {
  return (
    <div className="space-y-1">
      <h3 className="text-sm font-semibold text-slate-700">{title}</h3>
      {empty ? <p className="text-sm text-slate-500">None yet.</p> : null}
      {children}
    </div>
  );
}

/** Asks for a stronger verification when the last change needed one (the stronger changes' verdict decides which). */
function StrongerVerification({ view, manage }: SectionProps) {
  if (view.error === null) return null;
  const pending = [manage.verdicts.removePhishingResistant, manage.verdicts.removePossession, manage.verdicts.recoveryCodes].find((v) => !v.ok);
  if (!pending || pending.ok || !view.addVerdict.ok) return null;
  return <VerifySection view={view} plan={pending.verify} />;
}

export function FactorsSection({ view, manage }: SectionProps) {
  const { passkeys, securityKeys, authenticatorApps } = manage.credentials;
  const webauthnForm = { basePath: view.basePath, txId: "", csrf: view.csrf };
  const canAdd = view.addVerdict.ok;
  return (
    <PortalSection title="Sign-in methods">
      <div className="space-y-5">
        <StrongerVerification view={view} manage={manage} />
        <FactorGroup title="Passkeys" empty={passkeys.length === 0}>
          <ul className="divide-y divide-slate-100">
            {passkeys.map((f) => (
              <FactorRow key={f.id} view={view} factor={f} removeVerdict={manage.verdicts.removePhishingResistant} />
            ))}
          </ul>
          {canAdd && manage.creation.passkey ? (
            <WebAuthnForm
              {...webauthnForm}
              path="/account/webauthn/register"
              ceremony="create"
              kind="passkey"
              optionsJSON={manage.creation.passkey}
              label="Add a passkey"
              failedMessage="The passkey could not be created. Try again."
              unsupportedMessage="This browser cannot create passkeys."
            />
          ) : null}
        </FactorGroup>

        <FactorGroup title="Security keys" empty={securityKeys.length === 0}>
          <ul className="divide-y divide-slate-100">
            {securityKeys.map((f) => (
              <FactorRow key={f.id} view={view} factor={f} removeVerdict={manage.verdicts.removePhishingResistant} />
            ))}
          </ul>
          {canAdd && manage.creation.securityKey ? (
            <WebAuthnForm
              {...webauthnForm}
              path="/account/webauthn/register"
              ceremony="create"
              kind="security_key"
              optionsJSON={manage.creation.securityKey}
              label="Add a security key"
              failedMessage="The security key could not be registered. Try again."
              unsupportedMessage="This browser cannot use security keys."
            />
          ) : null}
        </FactorGroup>

        <FactorGroup title="Authenticator apps" empty={authenticatorApps.length === 0 && !manage.pendingApp}>
          <ul className="divide-y divide-slate-100">
            {authenticatorApps.map((f) => (
              <FactorRow key={f.id} view={view} factor={f} removeVerdict={manage.verdicts.removePossession} />
            ))}
          </ul>
          {manage.pendingApp ? (
            <div className="space-y-3 rounded-md border border-slate-200 p-3">
              <p className="text-sm text-slate-700">Scan this code with your authenticator app, then enter the 6-digit code it shows.</p>
              {/* eslint-disable-next-line @next/next/no-img-element -- a data: URL rendered on the server */}
              <img src={manage.pendingApp.qrSvg} alt="QR code for your authenticator app" className="mx-auto h-44 w-44" />
              <p className="text-center text-xs text-slate-500">
                Can&apos;t scan? Enter this key: <code className="break-all font-mono text-slate-800">{manage.pendingApp.secret}</code>
              </p>
              <PortalForm view={view} path="/account/authenticator-app/confirm">
                <label htmlFor="portal-totp-code" className="block text-sm font-medium text-slate-700">
                  Code from the app
                </label>
                <input id="portal-totp-code" name="code" inputMode="numeric" autoComplete="one-time-code" pattern="[0-9 ]*" maxLength={8} required className={inputClass} />
                <button type="submit" className={addButton}>
                  Add authenticator app
                </button>
              </PortalForm>
              <PortalForm view={view} path="/account/authenticator-app/cancel">
                <button type="submit" className={smallButton}>
                  Cancel
                </button>
              </PortalForm>
            </div>
          ) : canAdd ? (
            <PortalForm view={view} path="/account/authenticator-app/start">
              <button type="submit" className={addButton}>
                Add an authenticator app
              </button>
            </PortalForm>
          ) : null}
        </FactorGroup>
        {!canAdd ? <p className="text-sm text-slate-500">Confirm it&apos;s you above to add a sign-in method.</p> : null}
      </div>
    </PortalSection>
  );
}

export function RecoveryCodesSection({ view, manage }: SectionProps) {
  const set = manage.credentials.recoveryCodes;
  return (
    <PortalSection title="Recovery codes">
      {manage.newRecoveryCodes ? (
        <div className="space-y-3 rounded-md border border-amber-200 bg-amber-50 p-3">
          <p className="text-sm text-amber-900">Save these codes somewhere safe. Each works once. They will not be shown again.</p>
          <ol className="grid grid-cols-1 gap-1 font-mono text-sm sm:grid-cols-2">
            {manage.newRecoveryCodes.map((code) => (
              <li key={code} className="break-all">
                {code}
              </li>
            ))}
          </ol>
          <PortalForm view={view} path="/account/recovery-codes/saved">
            <button type="submit" className={addButton}>
              I have saved them
            </button>
          </PortalForm>
        </div>
      ) : null}
      <p className="mb-3 text-sm text-slate-600">
        {set ? `${set.remaining} of ${set.total} codes left (created ${formatUtc(set.createdAt)}).` : "You have no recovery codes."} Recovery codes sign you in when you
        cannot use your second step.
      </p>
      <PortalForm view={view} path="/account/recovery-codes">
        <button type="submit" className={addButton} title={manage.verdicts.recoveryCodes.ok ? undefined : "You will be asked to confirm it's you first"}>
          {set ? "Create new codes (the old ones stop working)" : "Create recovery codes"}
        </button>
      </PortalForm>
    </PortalSection>
  );
}

export function ApplicationSessionsSection({ view, manage }: SectionProps) {
  const apps = manage.applications;
  return (
    <PortalSection title="Application sessions">
      {apps.length === 0 ? (
        <p className="text-sm text-slate-600">You are not signed in to any application.</p>
      ) : (
        <ul className="divide-y divide-slate-100">
          {apps.map((a) => (
            <li key={a.grantId} className="space-y-1 py-3">
              <div className="flex flex-wrap items-baseline justify-between gap-2">
                <span className="break-all text-sm font-medium">{a.applicationName}</span>
                {a.current ? <span className="rounded bg-indigo-50 px-1.5 py-0.5 text-xs font-medium text-indigo-700">you came from here</span> : null}
              </div>
              <p className="text-xs text-slate-500">
                Last used {formatUtc(a.lastUsedAt)} · signed in {formatUtc(a.signedInAt)}
              </p>
              <p className="break-all text-xs text-slate-500">
                {a.device ?? "Unknown device"} · {a.address ?? "unknown address"}
              </p>
              <PortalForm view={view} path="/account/applications/sign-out">
                <input type="hidden" name="grant" value={a.grantId} />
                <button type="submit" className={dangerButton}>
                  Sign out of this application
                </button>
              </PortalForm>
              {a.current ? <p className="text-xs text-slate-500">Signing out of it also ends this visit to your security settings.</p> : null}
            </li>
          ))}
        </ul>
      )}
    </PortalSection>
  );
}

export function SecurityAlertsSection({ manage }: SectionProps) {
  if (manage.alerts.length === 0) {
    return (
      <PortalSection title="Security alerts">
        <p className="text-sm text-slate-600">No alerts in the last 90 days.</p>
      </PortalSection>
    );
  }
  return (
    <PortalSection title="Security alerts">
      <ul className="space-y-2">
        {manage.alerts.map((a) => (
          <li key={a.id} role="alert" className="rounded-md border border-red-200 bg-red-50 px-3 py-2 text-sm text-red-900">
            <p className="font-medium">Possible stolen sign-in: {a.applicationName ?? a.clientId ?? "an application"}</p>
            <p className="text-xs">
              {formatUtc(a.at)} · from {a.address ?? "an unknown address"}
            </p>
            <p className="mt-1 text-xs">
              An old sign-in token of this application was used again, so we signed you out of it there. If this was not you, review your sign-in methods and
              the applications you are signed in to.
            </p>
          </li>
        ))}
      </ul>
    </PortalSection>
  );
}
