"use client";

import { useId, useState, useSyncExternalStore } from "react";
import { useConsoleForm } from "@/components/ui/form";
import { contrastRatio, formatRatio, HEX_COLOR } from "@/lib/branding/contrast";
import { paletteFor, primaryColorProblem, SURFACES } from "@/lib/branding/rule";

/**
 * The primary colour as a colour picker and its #rrggbb text (kept in step), with a live preview
 * of a button and a link on the light and dark surfaces, and the contrast check the server applies.
 */
export function PrimaryColorField({ defaultValue }: { defaultValue: string }) {
  const id = useId();
  const { state } = useConsoleForm();
  const submitted = state.status === "error" && typeof state.values?.primary_color === "string" ? state.values.primary_color : undefined;
  const [value, setValue] = useState(submitted ?? defaultValue);
  const error = state.status === "error" ? state.fieldErrors.primary_color : undefined;
  const hex = value.trim().toLowerCase();
  const valid = HEX_COLOR.test(hex);
  // The same rule as the server's, shown while typing; the server's answer is what counts.
  const problem = valid ? primaryColorProblem(hex) : null;
  const palette = valid && !problem ? paletteFor(hex) : null;
  return (
    <div>
      <label htmlFor={`${id}-hex`} className="block text-sm font-medium text-slate-700">
        Primary colour
      </label>
      <div className="mt-1 flex items-center gap-2">
        <input
          type="color"
          aria-label="Pick the primary colour"
          value={valid ? hex : "#000000"}
          onChange={(e) => setValue(e.target.value)}
          className="h-10 w-14 cursor-pointer rounded-md border border-slate-300 bg-white p-1 focus:outline-none focus:ring-2 focus:ring-indigo-300"
        />
        <input
          id={`${id}-hex`}
          name="primary_color"
          value={value}
          onChange={(e) => setValue(e.target.value)}
          autoComplete="off"
          spellCheck={false}
          aria-invalid={error || problem ? true : undefined}
          aria-describedby={`${id}-hint ${id}-check${error ? ` ${id}-error` : ""}`}
          className={`block w-32 rounded-md border px-3 py-2 font-mono text-sm shadow-sm focus:outline-none focus:ring-2 ${error ? "border-red-400 focus:border-red-500 focus:ring-red-200" : "border-slate-300 focus:border-indigo-500 focus:ring-indigo-200"}`}
        />
      </div>
      <p id={`${id}-hint`} className="mt-1 text-xs text-slate-500">
        The background of buttons (with white or dark text, whichever reads better), and the colour of links and focus rings. It must reach 4.5:1 contrast with its button text.
      </p>
      <p id={`${id}-check`} className={`mt-1 text-sm ${problem ? "text-red-700" : "text-slate-600"}`} aria-live="polite">
        {!valid ? "Enter a colour as #rrggbb." : problem ? problem : `Button text contrast ${formatRatio(contrastRatio(hex, palette!.onPrimary))}.`}
      </p>
      {error ? (
        <p id={`${id}-error`} className="mt-1 text-sm text-red-700" data-testid="primary-color-error">
          {error}
        </p>
      ) : null}
      {palette ? <Preview palette={palette} /> : null}
    </div>
  );
}

const noSubscription = () => () => {};

function Preview({ palette }: { palette: ReturnType<typeof paletteFor> }) {
  // Rendered in the browser only: its colours are style properties, which the page's CSP allows
  // when set from script but not as attributes in the server's HTML.
  const inBrowser = useSyncExternalStore(noSubscription, () => true, () => false);
  if (!inBrowser) return null;
  const themes = [
    { name: "Light", surface: SURFACES.light.card, text: "#0f172a", link: palette.linkLight, border: "#e2e8f0" },
    { name: "Dark", surface: SURFACES.dark.card, text: "#f1f5f9", link: palette.linkDark, border: "#334155" },
  ];
  return (
    <div className="mt-3 grid gap-3 sm:grid-cols-2" aria-label="Preview" role="group">
      {themes.map((t) => (
        // Colours from the checked palette, as the hosted pages will show them.
        <div key={t.name} className="rounded-md border p-3" style={{ background: t.surface, color: t.text, borderColor: t.border }}>
          <p className="mb-2 text-xs font-medium">{t.name} theme</p>
          <span className="block rounded-md px-3 py-1.5 text-center text-sm font-semibold" style={{ background: palette.primary, color: palette.onPrimary }}>
            Continue
          </span>
          <span className="mt-2 block text-sm font-medium underline" style={{ color: t.link }}>
            Forgot your password? ({formatRatio(contrastRatio(t.link, t.surface))})
          </span>
        </div>
      ))}
    </div>
  );
}

/** The logo file input, its error beside it. */
export function LogoField() {
  const id = useId();
  const { state } = useConsoleForm();
  const error = state.status === "error" ? state.fieldErrors.logo : undefined;
  return (
    <div>
      <label htmlFor={id} className="block text-sm font-medium text-slate-700">
        Logo image
      </label>
      <input
        id={id}
        name="logo"
        type="file"
        accept="image/png,image/jpeg,image/webp,image/gif"
        aria-invalid={error ? true : undefined}
        aria-describedby={`${id}-hint${error ? ` ${id}-error` : ""}`}
        className="mt-1 block w-full text-sm text-slate-700 file:mr-3 file:rounded-md file:border file:border-slate-300 file:bg-white file:px-3 file:py-1.5 file:text-sm file:font-medium file:text-slate-800 hover:file:bg-slate-50 focus:outline-none focus-visible:ring-2 focus-visible:ring-indigo-300"
      />
      <p id={`${id}-hint`} className="mt-1 text-xs text-slate-500">
        PNG, JPEG, WebP or GIF, at most 200 KB. SVG is not accepted. Shown about 40 pixels high.
      </p>
      {error ? (
        <p id={`${id}-error`} className="mt-1 text-sm text-red-700" data-testid="logo-error">
          {error}
        </p>
      ) : null}
    </div>
  );
}
