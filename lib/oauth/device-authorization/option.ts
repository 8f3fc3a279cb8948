import { defineApplicationOption } from "../../surfaces/application-options";

/** The per-application switch (RFC 8628 has no client metadata name; this one says what it allows). */
export const DEVICE_AUTHORIZATION_OPTION = defineApplicationOption({
  key: "device_authorization_grant",
  label: "Device authorization grant",
  hint: "Lets a device without a browser (a command-line tool, a TV) sign a user in: it shows a code that the user enters on the workspace's device page (RFC 8628).",
  types: ["PUBLIC", "WEB_CONFIDENTIAL"],
});
