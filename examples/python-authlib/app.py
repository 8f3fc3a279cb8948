# app.py
import os
import secrets
from urllib.parse import quote, urlencode

import requests
from authlib.integrations.flask_client import OAuth
from flask import Flask, abort, redirect, request, session
from markupsafe import escape

ISSUER = os.environ["LATCHKEY_ISSUER"]  # <PUBLIC_URL>/t/<workspace-id>
CLIENT_ID = os.environ["LATCHKEY_CLIENT_ID"]
CLIENT_SECRET = os.environ["LATCHKEY_CLIENT_SECRET"]
APP_ORIGIN = os.environ.get("APP_ORIGIN", "http://localhost:4000")

app = Flask(__name__)
app.secret_key = os.environ["FLASK_SECRET_KEY"]  # signs Flask's session cookie
oauth = OAuth(app)
latchkey = oauth.register(
    "latchkey",
    client_id=CLIENT_ID,
    client_secret=CLIENT_SECRET,
    server_metadata_url=f"{ISSUER}/.well-known/openid-configuration",
    client_kwargs={
        "scope": "openid email profile offline_access",
        "code_challenge_method": "S256",  # PKCE, required for every client
        "token_endpoint_auth_method": "client_secret_basic",  # HTTP Basic only
    },
)

# Tokens stay on the server (Flask's cookie is signed, not encrypted). Use your database.
SIGNED_IN = {}


def basic():
    # RFC 6749 §2.3.1: form-encode the client id and secret, then HTTP Basic.
    return (quote(CLIENT_ID, safe=""), quote(CLIENT_SECRET, safe=""))


def endpoint(name):
    return latchkey.load_server_metadata()[name]


def signed_in_or_403():
    """The signed-in session of a POST whose CSRF token matches, or 403."""
    current = SIGNED_IN.get(session.get("sid"))
    if current is None or not secrets.compare_digest(request.form.get("csrf", ""), session.get("csrf", "")):
        abort(403)
    return current


def page(body):
    return f"<!doctype html><title>Authlib and Latchkey</title>{body}"


def button(action, label):
    return f'<form method="post" action="{action}"><input type="hidden" name="csrf" value="{session["csrf"]}"><button>{label}</button></form>'


@app.get("/")
def home():
    current = SIGNED_IN.get(session.get("sid"))
    if current is None:
        return page('<h1>Signed out</h1><a href="/login">Sign in</a>')
    return page(
        f"<h1>Signed in as {escape(current['email'])}</h1><p id=status>{escape(current['status'])}</p>"
        + button("/check", "Check session") + button("/refresh", "Refresh tokens")
        + button("/logout", "Sign out") + button("/disconnect", "Disconnect")
    )


@app.get("/login")
def login():
    # Authlib's default nonce is 20 characters: Latchkey requires 24–128 base64url characters.
    return latchkey.authorize_redirect(f"{APP_ORIGIN}/callback", nonce=secrets.token_urlsafe(32))


@app.get("/callback")
def callback():
    # Checks state, exchanges the code (Basic, PKCE), verifies the ES256 ID token and its nonce.
    token = latchkey.authorize_access_token()
    claims = token["userinfo"]
    sid = secrets.token_urlsafe(32)
    SIGNED_IN[sid] = {
        "email": claims.get("email", claims["sub"]),
        "access_token": token["access_token"],
        "refresh_token": token["refresh_token"],
        "status": "Signed in",
    }
    session.clear()
    session.update(sid=sid, csrf=secrets.token_urlsafe(32))
    return redirect("/")


def session_check(access_token):
    # 200 while the token and its whole authority chain (grant, session, user, client) are current.
    answer = requests.get(f"{ISSUER}/oidc/session", headers={"Authorization": f"Bearer {access_token}"}, timeout=10)
    return answer.status_code


@app.post("/check")
def check():
    current = signed_in_or_403()
    status = session_check(current["access_token"])
    current["status"] = "Session active" if status == 200 else f"Session ended (HTTP {status})"
    return redirect("/", code=303)


@app.post("/refresh")
def refresh():
    current = signed_in_or_403()
    answer = requests.post(
        endpoint("token_endpoint"),
        data={"grant_type": "refresh_token", "refresh_token": current["refresh_token"]},
        auth=basic(),
        timeout=10,
    )
    if answer.status_code != 200:
        # invalid_grant: the grant ended (signed out, revoked, expired). Sign in again.
        SIGNED_IN.pop(session.pop("sid", None), None)
        return redirect("/", code=303)
    tokens = answer.json()
    # Rotation: the refresh token is single use; keep the new one.
    current.update(access_token=tokens["access_token"], refresh_token=tokens["refresh_token"], status="Tokens refreshed")
    return redirect("/", code=303)


@app.post("/logout")
def logout():
    signed_in_or_403()
    SIGNED_IN.pop(session.pop("sid"), None)
    # Exactly these two parameters. Hosted logout ends the hosted session and every grant of it.
    query = urlencode({"client_id": CLIENT_ID, "post_logout_redirect_uri": f"{APP_ORIGIN}/signed-out"})
    return redirect(f"{endpoint('end_session_endpoint')}?{query}", code=303)


@app.get("/signed-out")
def signed_out():
    return page('<h1>Signed out</h1><a href="/login">Sign in again</a>')


@app.post("/disconnect")
def disconnect():
    # Revocation of the refresh token ends the grant and its access tokens (not the hosted session).
    current = signed_in_or_403()
    requests.post(
        endpoint("revocation_endpoint"),
        data={"token": current["refresh_token"], "token_type_hint": "refresh_token"},
        auth=basic(),
        timeout=10,
    )
    SIGNED_IN.pop(session.pop("sid"), None)
    status = session_check(current["access_token"])
    return page(f"<h1>Disconnected</h1><p id=status>Session check after revocation: HTTP {status}</p>")


if __name__ == "__main__":
    app.run(host="localhost", port=int(os.environ.get("PORT", "4000")))
