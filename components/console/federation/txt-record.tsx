import { CopyButton } from "@/components/ui/copy-button";

/**
 * A value an administrator copies into another system (a DNS record, an upstream registration).
 * `wide` fits labels of two words on one line (a SAML connection's "Entity ID", "Metadata URL").
 */
export function CopyValue({ label, value, wide = false }: { label: string; value: string; wide?: boolean }) {
  return (
    <div className="flex min-w-0 flex-wrap items-center gap-2">
      <span className={`${wide ? "w-28" : "w-14"} shrink-0 text-xs font-medium uppercase tracking-wide text-slate-500`}>{label}</span>
      {/* Grows beside its label and button, and goes to a line of its own only where they do not fit together. */}
      <span className="min-w-0 flex-1 basis-64">
        <code className="break-all rounded bg-slate-100 px-1.5 py-0.5 font-mono text-xs text-slate-800">{value}</code>
      </span>
      <CopyButton value={value} label={`Copy ${label.toLowerCase()}`} />
    </div>
  );
}

/** The TXT record that proves control of a domain. */
export function TxtRecord({ name, value }: { name: string; value: string }) {
  return (
    <div className="space-y-1.5">
      <CopyValue label="Name" value={name} />
      <div className="flex items-center gap-2">
        <span className="w-14 shrink-0 text-xs font-medium uppercase tracking-wide text-slate-500">Type</span>
        <code className="font-mono text-xs">TXT</code>
      </div>
      <CopyValue label="Value" value={value} />
    </div>
  );
}
