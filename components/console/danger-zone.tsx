import type { ReactNode } from "react";
import { Card } from "@/components/ui/card";

/**
 * The one place on a page for what cannot be taken back lightly (disable, delete): the page's last
 * card, red-framed and titled "Danger zone", one item per action, each saying what it ends before
 * its quiet opener. The confirmation itself is ConfirmButton's dialog or ConfirmedAction's typed form.
 */
export function DangerZone({ id = "danger-zone", description, children }: { id?: string; description?: ReactNode; children: ReactNode }) {
  return (
    <Card id={id} title="Danger zone" description={description} tone="danger">
      <div className="-my-4 divide-y divide-slate-100">{children}</div>
    </Card>
  );
}

export function DangerZoneItem({ title, description, children }: { title: string; description?: ReactNode; children: ReactNode }) {
  return (
    <div className="space-y-3 py-4">
      <div>
        <h3 className="text-sm font-semibold text-slate-900">{title}</h3>
        {description ? <p className="mt-0.5 text-sm text-slate-600">{description}</p> : null}
      </div>
      {children}
    </div>
  );
}
