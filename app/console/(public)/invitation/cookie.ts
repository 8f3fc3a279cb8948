/** Where the invitation page keeps the link's secret while the invitee signs in (an hour at most). */
export const INVITATION_PAGE = "/console/invitation";
export const INVITATION_COOKIE = "lk_invitation";
export const INVITATION_COOKIE_PATH = INVITATION_PAGE;
/** The proof that this browser entered the code sent to the invited address (30 minutes). */
export const INVITATION_PROOF_COOKIE = "lk_invitation_proof";
