import { describe, expect, it } from "vitest";
import { contrastRatio, formatRatio, relativeLuminance } from "./contrast";
import { hostedErrorPageCss, hostedThemeCss } from "./css";
import { checkLogo, LogoError, logoFromDataUrl, sniffLogoType } from "./logo";
import { DEFAULT_PRIMARY_COLOR, paletteFor, primaryColorField, primaryColorProblem, resolveBranding, storedBrandingSchema, SURFACES } from "./rule";

const PNG = Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==", "base64");

describe("contrast (WCAG relative luminance)", () => {
  it("known ratios", () => {
    expect(relativeLuminance("#ffffff")).toBe(1);
    expect(relativeLuminance("#000000")).toBe(0);
    expect(contrastRatio("#ffffff", "#000000")).toBe(21);
    expect(contrastRatio("#000000", "#ffffff")).toBe(21);
    expect(contrastRatio("#777777", "#ffffff")).toBeCloseTo(4.48, 2);
    expect(contrastRatio("#767676", "#ffffff")).toBeCloseTo(4.54, 2);
    expect(contrastRatio("#4f46e5", "#ffffff")).toBeCloseTo(6.29, 1);
    expect(contrastRatio("#123456", "#123456")).toBe(1);
  });

  it("a ratio just under 4.5 is never shown as 4.5", () => {
    expect(formatRatio(4.4999)).toBe("4.49:1");
    expect(formatRatio(21)).toBe("21.00:1");
  });
});

describe("the primary colour", () => {
  it("is refused when neither white nor near-black button text reaches 4.5:1, with the measured ratio", () => {
    expect(primaryColorProblem("#777777")).toMatch(/reaches only 4\.47:1.*needs at least 4\.5:1/);
    expect(primaryColorProblem("#808080")).toMatch(/reaches only 4\.49:1/);
    expect(primaryColorField.safeParse("#777777").success).toBe(false);
  });

  it("dark colours get white text, light colours near-black text", () => {
    expect(primaryColorProblem("#4f46e5")).toBeNull();
    expect(paletteFor("#4f46e5").onPrimary).toBe("#ffffff");
    expect(primaryColorProblem("#facc15")).toBeNull();
    expect(paletteFor("#facc15").onPrimary).toBe("#111827");
    for (const hex of ["#4f46e5", "#facc15", "#767676", "#0f172a", "#ffffff"]) {
      const p = paletteFor(hex);
      expect(contrastRatio(p.primary, p.onPrimary), hex).toBeGreaterThanOrEqual(4.5);
      expect(contrastRatio(p.primaryHover, p.onPrimary), hex).toBeGreaterThanOrEqual(4.5);
    }
  });

  it("links get a shade readable on every surface of each theme", () => {
    for (const hex of ["#4f46e5", "#facc15", "#767676", "#0f172a", "#ffffff", "#22c55e", "#1d4ed8"]) {
      const p = paletteFor(hex);
      for (const s of Object.values(SURFACES.light)) expect(contrastRatio(p.linkLight, s), `${hex} light ${s}`).toBeGreaterThanOrEqual(4.5);
      for (const s of Object.values(SURFACES.dark)) expect(contrastRatio(p.linkDark, s), `${hex} dark ${s}`).toBeGreaterThanOrEqual(4.5);
    }
    // A colour already readable keeps its own shade; a light one is darkened for the light theme.
    expect(paletteFor("#1d4ed8").linkLight).toBe("#1d4ed8");
    expect(paletteFor("#facc15").linkLight).not.toBe("#facc15");
    expect(paletteFor("#facc15").linkDark).toBe("#facc15");
    expect(paletteFor("#1d4ed8").linkDark).not.toBe("#1d4ed8");
  });

  it("must be #rrggbb; upper case is normalised", () => {
    expect(primaryColorField.safeParse("#ABCDEF").data).toBe("#abcdef");
    for (const bad of ["red", "#abc", "#abcdefff", "rgb(0,0,0)", "#ggg000", ""]) expect(primaryColorField.safeParse(bad).success, bad).toBe(false);
  });
});

describe("stored branding", () => {
  it("defaults: the workspace name, Latchkey indigo, following the browser", () => {
    const b = resolveBranding({}, "Acme");
    expect(b).toMatchObject({ displayName: "Acme", primaryColor: DEFAULT_PRIMARY_COLOR, theme: "auto", custom: { displayName: false, primaryColor: false } });
  });

  it("reads back what was stored", () => {
    const b = resolveBranding({ displayName: "Acme Sign-in", primaryColor: "#1d4ed8", theme: "dark" }, "Acme");
    expect(b).toMatchObject({ displayName: "Acme Sign-in", primaryColor: "#1d4ed8", theme: "dark", custom: { displayName: true, primaryColor: true } });
  });

  it("a stored value that fails the rule falls back to its default, never an unreadable page", () => {
    const b = resolveBranding({ displayName: "x".repeat(61), primaryColor: "#777777", theme: "neon" }, "Acme");
    expect(b).toMatchObject({ displayName: "Acme", primaryColor: DEFAULT_PRIMARY_COLOR, theme: "auto" });
  });

  it("the display name: at most 60 characters, no control characters", () => {
    expect(storedBrandingSchema.safeParse({ displayName: "x".repeat(60) }).success).toBe(true);
    expect(storedBrandingSchema.safeParse({ displayName: "x".repeat(61) }).success).toBe(false);
    expect(storedBrandingSchema.safeParse({ displayName: "a\nb" }).success).toBe(false);
  });
});

describe("logos", () => {
  it("recognised by their bytes: PNG, JPEG, GIF, WebP", () => {
    expect(sniffLogoType(PNG)).toBe("image/png");
    expect(sniffLogoType(Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0, 0]))).toBe("image/jpeg");
    expect(sniffLogoType(Buffer.from("GIF89a\x01\x00", "latin1"))).toBe("image/gif");
    expect(sniffLogoType(Buffer.concat([Buffer.from("RIFF"), Buffer.alloc(4), Buffer.from("WEBPVP8 ")]))).toBe("image/webp");
  });

  it("SVG, HTML and anything else are refused whatever they claim to be", () => {
    const svg = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>');
    expect(sniffLogoType(svg)).toBeNull();
    expect(() => checkLogo(svg)).toThrow(/PNG, JPEG, WebP or GIF/);
    expect(() => logoFromDataUrl(`data:image/png;base64,${svg.toString("base64")}`)).toThrow(LogoError);
    expect(() => checkLogo(Buffer.from("<html>"))).toThrow(LogoError);
  });

  it("at most 200 KB, not empty", () => {
    const big = Buffer.concat([PNG, Buffer.alloc(200 * 1024 - PNG.length + 1)]);
    expect(() => checkLogo(big)).toThrow(/the limit is 200 KB/);
    expect(checkLogo(big.subarray(0, 200 * 1024)).contentType).toBe("image/png");
    expect(() => checkLogo(Buffer.alloc(0))).toThrow(/empty/);
  });

  it("its digest is the SHA-256 of the bytes; data URLs decode to the same logo", () => {
    const logo = checkLogo(PNG);
    expect(logo.digest).toMatch(/^[0-9a-f]{64}$/);
    expect(logoFromDataUrl(`data:image/png;base64,${PNG.toString("base64")}`).digest).toBe(logo.digest);
    expect(() => logoFromDataUrl("https://cdn.example/logo.png")).toThrow(/data URL/);
  });
});

describe("theme CSS", () => {
  it("carries the palette, the dark theme forced and following the browser", () => {
    const css = hostedThemeCss(paletteFor("#facc15"));
    expect(css).toContain("--lk-primary:#facc15");
    expect(css).toContain("--lk-on-primary:#111827");
    expect(css).toMatch(/\.lk-hosted\[data-theme="dark"\]\{[^}]*--color-white:#0f172a/);
    expect(css).toMatch(/@media \(prefers-color-scheme: dark\)\{\.lk-hosted\[data-theme="auto"\]\{[^}]*--color-slate-900:#f1f5f9/);
    expect(css).not.toMatch(/[<>]/);
  });

  it("the error page follows the browser's scheme", () => {
    expect(hostedErrorPageCss()).toContain("@media (prefers-color-scheme: dark)");
  });
});
