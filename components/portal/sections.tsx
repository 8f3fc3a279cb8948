/**
 * The portal's sections. Each receives the page's view (lib/account-security/portal-view.ts) and
 * renders one part of the account's security settings.
 */
import type { PortalView } from "@/lib/account-security/portal-view";
import { PortalSection } from "./frame";

export function FactorsSection({ view }: { view: PortalView }) {
  const factors = view.factors.filter((f) => f.kind !== "recovery_code");
  return (
    <PortalSection title="Sign-in methods">
      {factors.length === 0 ? (
        <p className="text-sm text-slate-600">No passkeys, authenticator apps or security keys yet.</p>
      ) : (
        <ul className="divide-y divide-slate-100 text-sm">
          {factors.map((f) => (
            <li key={`${f.kind}:${f.id}`} className="py-2">
              <span className="font-medium">{f.name}</span>
            </li>
          ))}
        </ul>
      )}
    </PortalSection>
  );
}

export function RecoveryCodesSection({ view }: { view: PortalView }) {
  const set = view.factors.find((f) => f.kind === "recovery_code");
  return (
    <PortalSection title="Recovery codes">
      <p className="text-sm text-slate-600">{set ? `${set.remaining ?? 0} unused recovery codes.` : "No recovery codes."}</p>
    </PortalSection>
  );
}

export function ApplicationSessionsSection({ view }: { view: PortalView }) {
  void view;
  return (
    <PortalSection title="Application sessions">
      <p className="text-sm text-slate-600">Applications you are signed in to appear here.</p>
    </PortalSection>
  );
}

export function SecurityAlertsSection({ view }: { view: PortalView }) {
  void view;
  return <PortalSection title="Security alerts">{null}</PortalSection>;
}
