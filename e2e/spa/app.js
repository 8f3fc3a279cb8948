// The example single-page app: buttons over latchkey-spa.js, results shown as JSON for the e2e spec.
import { createLatchkeyClient } from "./latchkey-spa.js";

const config = await (await fetch("/config.json")).json();
const latchkey = createLatchkeyClient(config);
// The e2e spec reads the tokens through this to probe them after sign-out.
window.latchkey = latchkey;

const $ = (id) => document.getElementById(id);

async function render(result) {
  const user = await latchkey.userManager.getUser();
  $("status").textContent = user ? `Signed in as ${user.profile.email}` : "Signed out";
  if (result !== undefined) $("result").textContent = JSON.stringify(result, null, 2);
  for (const id of ["check", "refresh", "revoke", "sign-out"]) $(id).disabled = !user;
  $("sign-in").disabled = false;
}

/** Runs an action; its failure (for example a fetch the browser blocked) is shown, not swallowed. */
async function run(action) {
  $("error").textContent = "";
  $("result").textContent = "";
  try {
    await render(await action());
  } catch (error) {
    console.error(error);
    $("error").textContent = `${error?.name ?? "Error"}: ${error?.message ?? String(error)}`;
    $("result").textContent = "";
    await render();
  }
}

/** Status of UserInfo and the session check for the app's current access token. */
async function probe() {
  const user = await latchkey.userManager.getUser();
  const headers = { Authorization: `Bearer ${user.access_token}` };
  const userinfo = await fetch(await latchkey.userManager.metadataService.getUserInfoEndpoint(), { headers });
  return { userinfo_status: userinfo.status, session_check: await latchkey.checkSession() };
}

$("sign-in").addEventListener("click", () => run(() => latchkey.signIn()));
$("check").addEventListener("click", () => run(async () => ({ session_check: await latchkey.checkSession() })));
$("refresh").addEventListener("click", () =>
  run(async () => {
    const before = await latchkey.userManager.getUser();
    const after = await latchkey.refresh();
    return {
      refreshed: true,
      access_token_changed: after.access_token !== before.access_token,
      refresh_token_changed: !!after.refresh_token && after.refresh_token !== before.refresh_token,
      same_subject: after.profile.sub === before.profile.sub,
      scope: after.scope,
      session_check: await latchkey.checkSession(),
    };
  }),
);
$("revoke").addEventListener("click", () =>
  run(async () => {
    await latchkey.revoke();
    return { revoked: true, ...(await probe()) };
  }),
);
$("sign-out").addEventListener("click", () => run(() => latchkey.signOut()));

if (window.location.pathname === "/callback") {
  await run(async () => {
    const user = await latchkey.completeSignIn();
    window.history.replaceState(null, "", "/");
    return { profile: user.profile, scope: user.scope, session_check: await latchkey.checkSession() };
  });
} else if (window.location.pathname === "/signed-out") {
  await run(async () => ({ signed_out: true, ...(await latchkey.completeSignOut()) }));
} else {
  await render();
}
