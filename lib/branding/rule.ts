/**
 * The branding rule: what a workspace may set for its hosted pages (display name, primary colour,
 * theme), the defaults, and the contrast check. The console, the workspace file and the hosted
 * pages all go through this module.
 *
 * The primary colour is the background of primary buttons, with white or near-black text
 * (whichever contrasts more): a colour that reaches 4.5:1 with neither is refused. It is also the
 * colour of links and focus rings; where it is too light (or, in the dark theme, too dark) against
 * the page's surfaces for 4.5:1, a darker (lighter) shade of it is derived for that theme.
 */
import { z } from "zod";
import { contrastRatio, formatRatio, HEX_COLOR, mix } from "./contrast";

export const THEMES = ["auto", "light", "dark"] as const;
export type Theme = (typeof THEMES)[number];

export const DISPLAY_NAME_MAX = 60;
/** Latchkey's indigo: the primary colour of a workspace that has not chosen one. */
export const DEFAULT_PRIMARY_COLOR = "#4f46e5";
export const MIN_TEXT_CONTRAST = 4.5;

/** Button text on the primary colour: white, or this near-black when it contrasts more. */
export const ON_PRIMARY = { light: "#ffffff", dark: "#111827" } as const;

/**
 * The surfaces text sits on in each theme (card, page, muted panel); the hosted theme's CSS
 * (./css.ts) paints exactly these, so a link shade checked here is the one shown.
 */
export const SURFACES = {
  light: { card: "#ffffff", page: "#f8fafc", muted: "#f1f5f9" },
  dark: { card: "#0f172a", page: "#020617", muted: "#1e293b" },
} as const;

/** The refusal of a primary colour, or null when buttons in it can carry readable text. */
export function primaryColorProblem(hex: string): string | null {
  const best = Math.max(contrastRatio(hex, ON_PRIMARY.light), contrastRatio(hex, ON_PRIMARY.dark));
  if (best >= MIN_TEXT_CONTRAST) return null;
  return `Button text on ${hex} reaches only ${formatRatio(best)} (white or dark text, whichever is better); it needs at least 4.5:1. Choose a darker or lighter colour.`;
}

export const displayNameField = z
  .string({ error: "Enter a display name" })
  .trim()
  .max(DISPLAY_NAME_MAX, `Use at most ${DISPLAY_NAME_MAX} characters`)
  .refine((v) => !/[\u0000-\u001f\u007f]/.test(v), "Use printable characters only");

export const primaryColorField = z
  .string({ error: "Enter a colour as #rrggbb" })
  .trim()
  .toLowerCase()
  .regex(HEX_COLOR, "Enter a colour as #rrggbb, e.g. #4f46e5")
  .superRefine((hex, ctx) => {
    if (!HEX_COLOR.test(hex)) return;
    const problem = primaryColorProblem(hex);
    if (problem) ctx.addIssue({ code: "custom", message: problem });
  });

export const themeField = z.enum(THEMES, { error: "Choose auto, light or dark" });

/** What is stored in `workspaces.branding` (every field optional: absent means the default). */
export const storedBrandingSchema = z.object({
  displayName: displayNameField.optional(),
  primaryColor: primaryColorField.optional(),
  theme: themeField.optional(),
});
export type StoredBranding = z.output<typeof storedBrandingSchema>;

/** The branding the hosted pages use: every field decided, with the shades derived from the primary colour. */
export interface Branding {
  displayName: string;
  primaryColor: string;
  theme: Theme;
  /** Whether the workspace chose each value (the console shows the defaults as such). */
  custom: { displayName: boolean; primaryColor: boolean };
  palette: Palette;
}

export interface Palette {
  primary: string;
  onPrimary: string;
  primaryHover: string;
  /** Links and focus rings on the light surfaces, and on the dark ones: at least 4.5:1 on each. */
  linkLight: string;
  linkDark: string;
}

const minContrast = (color: string, surfaces: Record<string, string>) => Math.min(...Object.values(surfaces).map((s) => contrastRatio(color, s)));

/** `color`, or the first shade of it towards `towards` that reaches 4.5:1 on every surface. */
function readableOn(color: string, surfaces: Record<string, string>, towards: string): string {
  for (let step = 0; step <= 20; step++) {
    const shade = mix(color, towards, step / 20);
    if (minContrast(shade, surfaces) >= MIN_TEXT_CONTRAST) return shade;
  }
  return towards;
}

export function paletteFor(primary: string): Palette {
  const onPrimary = contrastRatio(primary, ON_PRIMARY.light) >= contrastRatio(primary, ON_PRIMARY.dark) ? ON_PRIMARY.light : ON_PRIMARY.dark;
  return {
    primary,
    onPrimary,
    // Hover moves away from the text colour, so the hovered button keeps (and gains) contrast.
    primaryHover: mix(primary, onPrimary === ON_PRIMARY.light ? "#000000" : "#ffffff", 0.12),
    linkLight: readableOn(primary, SURFACES.light, "#000000"),
    linkDark: readableOn(primary, SURFACES.dark, "#ffffff"),
  };
}

/**
 * The branding of a workspace from its stored value. A stored field that no longer passes the
 * rule (it changed, or the row was edited by hand) falls back to its default rather than
 * showing an unreadable page.
 */
export function resolveBranding(stored: unknown, workspaceName: string): Branding {
  const record = stored && typeof stored === "object" ? (stored as Record<string, unknown>) : {};
  const pick = <T>(schema: z.ZodType<T>, value: unknown): T | undefined => {
    const parsed = schema.safeParse(value);
    return parsed.success ? parsed.data : undefined;
  };
  const displayName = pick(displayNameField, record.displayName) || undefined;
  const primaryColor = pick(primaryColorField, record.primaryColor);
  const theme = pick(themeField, record.theme) ?? "auto";
  const primary = primaryColor ?? DEFAULT_PRIMARY_COLOR;
  return {
    displayName: displayName ?? workspaceName,
    primaryColor: primary,
    theme,
    custom: { displayName: displayName !== undefined, primaryColor: primaryColor !== undefined },
    palette: paletteFor(primary),
  };
}

/** The stored form of a branding choice: defaults are left out, so a later default change reaches them. */
export function storedBranding(input: { displayName?: string | null; primaryColor?: string | null; theme?: Theme | null }): StoredBranding {
  return {
    ...(input.displayName ? { displayName: input.displayName } : {}),
    ...(input.primaryColor ? { primaryColor: input.primaryColor } : {}),
    ...(input.theme && input.theme !== "auto" ? { theme: input.theme } : {}),
  };
}
