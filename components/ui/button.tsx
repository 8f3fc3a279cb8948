import Link from "next/link";
import type { ComponentProps } from "react";

/**
 * `danger` opens a destructive action (quiet: red text and border), `destroy` carries it out: solid
 * red, only as the last step of a confirmation, so the loud button is the one that acts.
 */
export type ButtonVariant = "primary" | "secondary" | "danger" | "destroy" | "ghost";
export type ButtonSize = "sm" | "md";

const base =
  "inline-flex items-center justify-center gap-1.5 rounded-md font-medium shadow-sm transition-colors focus-visible:outline-none focus-visible:ring-2 focus-visible:ring-offset-1 disabled:cursor-not-allowed disabled:border-slate-200 disabled:bg-slate-100 disabled:text-slate-600 disabled:shadow-none";
const variants: Record<ButtonVariant, string> = {
  primary: "bg-indigo-600 text-white hover:bg-indigo-700 focus-visible:ring-indigo-400",
  secondary: "border border-slate-300 bg-white text-slate-800 hover:bg-slate-50 focus-visible:ring-indigo-300",
  danger: "border border-red-300 bg-white text-red-700 hover:border-red-400 hover:bg-red-50 focus-visible:ring-red-300",
  destroy: "bg-red-600 text-white hover:bg-red-700 focus-visible:ring-red-400",
  ghost: "text-slate-700 shadow-none hover:bg-slate-100 focus-visible:ring-indigo-300",
};
const sizes: Record<ButtonSize, string> = { sm: "px-2.5 py-1 text-xs", md: "px-3.5 py-2 text-sm" };

export function buttonClass(variant: ButtonVariant = "primary", size: ButtonSize = "md", extra = ""): string {
  return `${base} ${variants[variant]} ${sizes[size]} ${extra}`.trim();
}

export function Button({ variant = "primary", size = "md", className = "", type = "button", ...props }: ComponentProps<"button"> & { variant?: ButtonVariant; size?: ButtonSize }) {
  return <button type={type} className={buttonClass(variant, size, className)} {...props} />;
}

export function LinkButton({ variant = "secondary", size = "md", className = "", ...props }: ComponentProps<typeof Link> & { variant?: ButtonVariant; size?: ButtonSize }) {
  return <Link prefetch={false} className={buttonClass(variant, size, className)} {...props} />;
}
