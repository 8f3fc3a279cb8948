// Destructive console operations are confirmed by typing what is being removed: lib/surfaces/form-fields.ts.
export { confirmField, requireConfirmation } from "../surfaces/form-fields";
