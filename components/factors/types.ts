import type { ComponentType } from "react";
import type { VerifyPlan } from "@/lib/account-security/evidence";
import type { PortalView } from "@/lib/account-security/portal-view";
import type { Locale } from "@/lib/i18n/locales";
import type { Translate } from "@/lib/i18n/translate";
import type { SignInView } from "@/lib/sign-in/view";

export type StepView = Extract<SignInView, { kind: "step" }>;

/** A factor's part of a hosted sign-in step. */
export interface StepPartProps {
  view: StepView;
  t: Translate;
  /** Whether another factor's part is shown before it (a divider separates them). */
  after: boolean;
  /** Whether no part before it took the focus: it takes the focus and the primary button. */
  lead: boolean;
}

/** A factor's part of the portal's verification panel. */
export interface PortalPartProps {
  view: PortalView;
  t: Translate;
  /** The page's language, for the texts a factor holds itself (`LocalizedText`). */
  locale: Locale;
  /** The verdict shown: its `primary` or `mfa` list, by `reason`. */
  verdict: VerifyPlan;
  /** Whether another factor's part is shown before it. */
  after: boolean;
}

/**
 * What a factor renders, wherever it is offered (components/factors/index.ts maps each kind to it).
 * A factor with two kinds (a passkey, a security key) has one part for both, shown once.
 */
export interface FactorParts {
  /** Its form at the sign-in's second-factor step, and whether that form takes the focus (a field, shown open). */
  secondFactor: { Part: ComponentType<StepPartProps>; takesFocus: boolean } | null;
  /** Its enrolment at the sign-in's enrolment step, and what it adds after every enrolment offered. */
  enrol: { Part: ComponentType<StepPartProps>; After: ComponentType<StepPartProps> | null } | null;
  /**
   * Its part of the portal's verification, for a primary verification or a further factor.
   * `shown`: whether the view can show it (a WebAuthn ceremony needs its options); `leads`: shown
   * before the typed forms whatever the order offered (a one-tap ceremony).
   */
  portal: {
    primary: ComponentType<PortalPartProps> | null;
    mfa: ComponentType<PortalPartProps> | null;
    shown: (view: PortalView) => boolean;
    leads: boolean;
  } | null;
}
