/**
 * The hosted pages' theme as CSS. Tailwind's utilities read the palette from CSS variables
 * (`--color-slate-900`, `--color-indigo-600`, …), so the hosted wrapper (`.lk-hosted`, with
 * `data-theme` auto | light | dark) remaps them: the primary colour for buttons, its readable
 * shade for links and focus rings, and in the dark theme the whole neutral palette. `auto`
 * follows the browser's `prefers-color-scheme`. Only validated #rrggbb values reach this text.
 */
import { SURFACES, type Palette } from "./rule";

/** The neutral and status shades of the dark theme, replacing Tailwind's light ones. */
const DARK_PALETTE: Record<string, string> = {
  white: SURFACES.dark.card,
  "slate-50": SURFACES.dark.page,
  "slate-100": SURFACES.dark.muted,
  "slate-200": "#334155",
  "slate-300": "#64748b",
  "slate-400": "#94a3b8",
  "slate-500": "#94a3b8",
  "slate-600": "#cbd5e1",
  "slate-700": "#cbd5e1",
  "slate-800": "#e2e8f0",
  "slate-900": "#f1f5f9",
  "red-50": "#450a0a",
  "red-100": "#7f1d1d",
  "red-200": "#7f1d1d",
  "red-400": "#f87171",
  "red-500": "#f87171",
  "red-700": "#fca5a5",
  "red-800": "#fecaca",
  "red-900": "#fee2e2",
  "emerald-50": "#022c22",
  "emerald-200": "#065f46",
  "emerald-800": "#a7f3d0",
  "emerald-900": "#d1fae5",
  "amber-50": "#451a03",
  "amber-200": "#92400e",
  "amber-800": "#fde68a",
  "amber-900": "#fef3c7",
};

const declarations = (vars: Record<string, string>) =>
  Object.entries(vars)
    .map(([k, v]) => `${k}:${v}`)
    .join(";");

function darkDeclarations(palette: Palette): string {
  return declarations({
    ...Object.fromEntries(Object.entries(DARK_PALETTE).map(([k, v]) => [`--color-${k}`, v])),
    "--lk-link": palette.linkDark,
    "color-scheme": "dark",
  });
}

/** The stylesheet of the hosted wrapper for one workspace's palette. */
export function hostedThemeCss(palette: Palette): string {
  const base = declarations({
    "--lk-primary": palette.primary,
    "--lk-on-primary": palette.onPrimary,
    "--lk-primary-hover": palette.primaryHover,
    "--lk-link": palette.linkLight,
    // Tinted panels use the muted surface, on which the link shade was checked.
    "--color-indigo-50": "var(--color-slate-100)",
    "--color-indigo-100": "var(--color-slate-100)",
    ...Object.fromEntries([200, 300, 400, 500, 600, 700, 800, 900].map((n) => [`--color-indigo-${n}`, "var(--lk-link)"])),
    "color-scheme": "light",
  });
  const dark = darkDeclarations(palette);
  const darkBody = `background-color:${SURFACES.dark.page};color:${DARK_PALETTE["slate-900"]}`;
  return [
    `.lk-hosted{${base}}`,
    // White text stays white (the dark theme remaps --color-white to the card surface).
    `.lk-hosted .text-white{color:#fff}`,
    // Primary buttons: the primary colour with the text colour chosen for it.
    `.lk-hosted .bg-indigo-600{background-color:var(--lk-primary);color:var(--lk-on-primary)}`,
    `.lk-hosted .bg-indigo-600:hover{background-color:var(--lk-primary-hover)}`,
    `.lk-hosted[data-theme="dark"]{${dark}}`,
    `:root:has(.lk-hosted[data-theme="dark"]) body{${darkBody}}`,
    `@media (prefers-color-scheme: dark){.lk-hosted[data-theme="auto"]{${dark}}:root:has(.lk-hosted[data-theme="auto"]) body{${darkBody}}}`,
  ].join("\n");
}

/**
 * The stylesheet of the self-contained hosted error page (lib/hosted/html.ts): no workspace is
 * known there, so Latchkey's look, light or dark as the browser prefers.
 */
export function hostedErrorPageCss(): string {
  const { light, dark } = SURFACES;
  return `body{margin:0;font-family:ui-sans-serif,system-ui,-apple-system,"Segoe UI",sans-serif;background:${light.page};color:#0f172a;display:flex;min-height:100vh;align-items:center;justify-content:center}
main{max-width:28rem;margin:1rem;padding:2rem;background:${light.card};border:1px solid #e2e8f0;border-radius:.75rem;box-shadow:0 1px 2px rgba(0,0,0,.05)}
h1{font-size:1.25rem;margin:0 0 .75rem}p{line-height:1.5;color:#334155;margin:0 0 .75rem}code{font-size:.85rem;background:${light.muted};padding:.1rem .3rem;border-radius:.25rem;overflow-wrap:anywhere}
ul{margin:0 0 .75rem;padding-left:1.25rem;color:#334155}li{margin:.25rem 0}a{color:#3730a3}
@media (prefers-color-scheme: dark){:root{color-scheme:dark}body{background:${dark.page};color:#f1f5f9}main{background:${dark.card};border-color:#334155}p,ul{color:#cbd5e1}code{background:${dark.muted}}a{color:#a5b4fc}}`;
}
