/**
 * docs/security.md's table of limits, rendered from the declarations (./declarations.ts) with the
 * default settings, so the page says what the code enforces (a test compares the two).
 */
import { limitOf, type GuessingLimits, type LimitBase, type Rate, type RequestLimits } from "./declarations";

/** One declaration and where it is declared (a file and the exported name). */
export interface Declared<T> {
  limits: T;
  declaredIn: string;
  /** A factor's labels in `latchkey_sign_ins_total{method}`, on its first limit's row (none on another's). */
  signIns?: readonly string[];
}

const SETTING: Record<keyof LimitBase, string> = { failuresPer5Minutes: "RATE_LIMIT_FAILURES", requestsPerMinute: "RATE_LIMIT_PER_MINUTE" };

function windowText(ms: number): string {
  const minutes = ms / 60_000;
  if (minutes === 1) return "minute";
  if (minutes === 60) return "hour";
  return `${minutes} minutes`;
}

/** "30 per hour (3 × RATE_LIMIT_FAILURES)", "5 per 15 minutes". */
export function rateText(rate: Rate | undefined, base: LimitBase): string {
  if (!rate) return "—";
  const n = `**${limitOf(rate, base)} per ${windowText(rate.windowMs)}**`;
  if (rate.scale === null) return n;
  return `${n} (${rate.times === 1 ? "" : `${rate.times} × `}\`${SETTING[rate.scale]}\`)`;
}

function exemption(limits: GuessingLimits, base: LimitBase): string {
  if (!limits.perAccount) return "—";
  if (!limits.knownDevice) return "nobody";
  const methods = limits.knownDevice.after.map((m) => `\`${m}\``).join(", ");
  return `a browser whose hosted session of the account passed ${methods}; then ${rateText(limits.knownDevice.rate, base)} per such browser`;
}

export function renderGuessingTable(declared: readonly Declared<GuessingLimits>[], base: LimitBase): string {
  const rows = declared.map(({ limits: l, declaredIn, signIns }) =>
    [
      `${l.label} (\`${l.name}\`)`,
      l.perChallenge ?? "—",
      l.perAddress ? `${rateText(l.perAddress, base)} per client address` : l.unidentified ? `${rateText(l.unidentified, base)} per client address while no account is named` : "—",
      rateText(l.perAccountAndAddress, base),
      rateText(l.perAccount, base),
      exemption(l, base),
      declaredIn,
      signIns?.length ? signIns.map((m) => `\`${m}\``).join(", ") : "—",
    ].join(" | "),
  );
  return [
    "| Failures of | Per challenge | Per client address | Per account and address | Per account, all addresses, sessions and applications | Passes the account limit | Declared in | Its sign-ins, as `latchkey_sign_ins_total{method}` counts them |",
    "|---|---|---|---|---|---|---|---|",
    ...rows.map((r) => `| ${r} |`),
  ].join("\n");
}

export function renderRequestTable(declared: readonly Declared<RequestLimits>[], base: LimitBase): string {
  return [
    "| Requests | Limit | Per | Declared in |",
    "|---|---|---|---|",
    ...declared.map(({ limits: l, declaredIn }) => `| ${l.label} (\`${l.name}\`) | ${rateText(l.rate, base)} | ${l.per} | ${declaredIn} |`),
  ].join("\n");
}
