import type { ReactNode } from "react";

/**
 * The one look of every destructive confirmation, the modal dialog (ConfirmButton) and the typed
 * disclosure (ConfirmedAction) alike: a red-tinted title bar, what the action ends, then the
 * buttons on the right, the one that acts last. A confirmation of something that destroys nothing
 * (activating a signing key) keeps the layout in neutral colours.
 */
export function ConfirmationPanel({
  title,
  titleId,
  level = 2,
  tone = "danger",
  children,
  actions,
}: {
  title: ReactNode;
  titleId?: string;
  /** 2 in a dialog (its own context); 3 inside a page's card. */
  level?: 2 | 3;
  tone?: "danger" | "neutral";
  children: ReactNode;
  actions: ReactNode;
}) {
  const Heading = level === 2 ? "h2" : "h3";
  const danger = tone === "danger";
  return (
    <div className={`overflow-hidden rounded-lg border bg-white ${danger ? "border-red-200" : "border-slate-200"}`} data-confirmation={tone}>
      <div className={`border-b px-4 py-3 ${danger ? "border-red-100 bg-red-50" : "border-slate-100 bg-slate-50"}`}>
        <Heading id={titleId} className={`text-sm font-semibold ${danger ? "text-red-900" : "text-slate-900"}`}>
          {title}
        </Heading>
      </div>
      <div className="space-y-3 px-4 py-3 text-sm text-slate-700">{children}</div>
      <div className="flex flex-wrap justify-end gap-2 px-4 pb-4">{actions}</div>
    </div>
  );
}
