// Destructive console operations are confirmed by typing what is being removed: lib/forms/fields.ts.
export { confirmField, requireConfirmation } from "../forms/fields";
