// main.go
package main

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"fmt"
	"html"
	"log"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc"
	"golang.org/x/oauth2"
)

var (
	issuer    = os.Getenv("LATCHKEY_ISSUER") // <PUBLIC_URL>/t/<workspace-id>
	clientID  = os.Getenv("LATCHKEY_CLIENT_ID")
	secret    = os.Getenv("LATCHKEY_CLIENT_SECRET")
	appOrigin = os.Getenv("APP_ORIGIN")
)

// What the browser's cookie stands for; in memory to keep the example short (use your database).
type pending struct{ state, nonce, verifier string }
type signedIn struct {
	email, csrf, status string
	token               *oauth2.Token
}

var (
	mu       sync.Mutex
	sessions = map[string]any{}
)

func random() string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return base64.RawURLEncoding.EncodeToString(b) // 43 base64url characters
}

func main() {
	ctx := context.Background()
	provider, err := oidc.NewProvider(ctx, issuer)
	if err != nil {
		log.Fatal(err)
	}
	endpoint := provider.Endpoint()
	endpoint.AuthStyle = oauth2.AuthStyleInHeader // HTTP Basic only, no guessing
	config := oauth2.Config{
		ClientID: clientID, ClientSecret: secret, Endpoint: endpoint,
		RedirectURL: appOrigin + "/callback",
		Scopes:      []string{oidc.ScopeOpenID, "email", "profile", oidc.ScopeOfflineAccess},
	}
	verifier := provider.Verifier(&oidc.Config{ClientID: clientID, SupportedSigningAlgs: []string{oidc.ES256}})
	var meta struct {
		EndSession string `json:"end_session_endpoint"`
		Revocation string `json:"revocation_endpoint"`
	}
	if err := provider.Claims(&meta); err != nil {
		log.Fatal(err)
	}

	session := func(r *http.Request) (string, any) {
		c, err := r.Cookie("sid")
		if err != nil {
			return "", nil
		}
		mu.Lock()
		defer mu.Unlock()
		return c.Value, sessions[c.Value]
	}
	start := func(w http.ResponseWriter, value any) {
		id := random()
		mu.Lock()
		sessions[id] = value
		mu.Unlock()
		http.SetCookie(w, &http.Cookie{Name: "sid", Value: id, Path: "/", HttpOnly: true, SameSite: http.SameSiteLaxMode})
	}
	end := func(id string) {
		mu.Lock()
		delete(sessions, id)
		mu.Unlock()
	}
	// The signed-in session of a POST whose CSRF token matches.
	post := func(w http.ResponseWriter, r *http.Request) (string, *signedIn) {
		id, value := session(r)
		s, ok := value.(*signedIn)
		if r.Method != http.MethodPost || !ok || subtle.ConstantTimeCompare([]byte(r.FormValue("csrf")), []byte(s.csrf)) != 1 {
			http.Error(w, "forbidden", http.StatusForbidden)
			return "", nil
		}
		return id, s
	}
	page := func(w http.ResponseWriter, body string) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, "<!doctype html><title>Go and Latchkey</title>%s", body)
	}
	sessionCheck := func(accessToken string) int {
		// 200 while the token and its whole authority chain (grant, session, user, client) are current.
		req, _ := http.NewRequest(http.MethodGet, issuer+"/oidc/session", nil)
		req.Header.Set("Authorization", "Bearer "+accessToken)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			return 0
		}
		res.Body.Close()
		return res.StatusCode
	}

	http.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		_, value := session(r)
		s, ok := value.(*signedIn)
		if !ok {
			page(w, `<h1>Signed out</h1><a href="/login">Sign in</a>`)
			return
		}
		button := func(action, label string) string {
			return fmt.Sprintf(`<form method="post" action="%s"><input type="hidden" name="csrf" value="%s"><button>%s</button></form>`, action, s.csrf, label)
		}
		page(w, fmt.Sprintf("<h1>Signed in as %s</h1><p id=status>%s</p>", html.EscapeString(s.email), html.EscapeString(s.status))+
			button("/check", "Check session")+button("/refresh", "Refresh tokens")+button("/logout", "Sign out")+button("/disconnect", "Disconnect"))
	})

	http.HandleFunc("/login", func(w http.ResponseWriter, r *http.Request) {
		p := pending{state: random(), nonce: random(), verifier: random()}
		start(w, p)
		challenge := sha256.Sum256([]byte(p.verifier))
		http.Redirect(w, r, config.AuthCodeURL(p.state, oidc.Nonce(p.nonce),
			oauth2.SetAuthURLParam("code_challenge", base64.RawURLEncoding.EncodeToString(challenge[:])),
			oauth2.SetAuthURLParam("code_challenge_method", "S256")), http.StatusFound)
	})

	http.HandleFunc("/callback", func(w http.ResponseWriter, r *http.Request) {
		id, value := session(r)
		p, ok := value.(pending)
		end(id)
		if !ok || r.URL.Query().Get("state") != p.state {
			http.Error(w, "no sign-in in progress in this browser", http.StatusBadRequest)
			return
		}
		if e := r.URL.Query().Get("error"); e != "" {
			http.Error(w, "sign-in failed: "+e, http.StatusBadRequest)
			return
		}
		token, err := config.Exchange(r.Context(), r.URL.Query().Get("code"), oauth2.SetAuthURLParam("code_verifier", p.verifier))
		if err != nil {
			http.Error(w, "code exchange failed", http.StatusBadGateway)
			return
		}
		rawIDToken, _ := token.Extra("id_token").(string)
		idToken, err := verifier.Verify(r.Context(), rawIDToken)
		if err != nil || subtle.ConstantTimeCompare([]byte(idToken.Nonce), []byte(p.nonce)) != 1 {
			http.Error(w, "the ID token did not verify", http.StatusBadGateway)
			return
		}
		var claims struct {
			Email string `json:"email"`
		}
		if err := idToken.Claims(&claims); err != nil || claims.Email == "" {
			claims.Email = idToken.Subject
		}
		start(w, &signedIn{email: claims.Email, csrf: random(), status: "Signed in", token: token})
		http.Redirect(w, r, "/", http.StatusSeeOther)
	})

	http.HandleFunc("/check", func(w http.ResponseWriter, r *http.Request) {
		_, s := post(w, r)
		if s == nil {
			return
		}
		if status := sessionCheck(s.token.AccessToken); status == http.StatusOK {
			s.status = "Session active"
		} else {
			s.status = fmt.Sprintf("Session ended (HTTP %d)", status)
		}
		http.Redirect(w, r, "/", http.StatusSeeOther)
	})

	http.HandleFunc("/refresh", func(w http.ResponseWriter, r *http.Request) {
		id, s := post(w, r)
		if s == nil {
			return
		}
		// An expired copy makes the token source refresh now (Basic, grant_type=refresh_token).
		expired := *s.token
		expired.Expiry = time.Unix(1, 0)
		token, err := config.TokenSource(r.Context(), &expired).Token()
		if err != nil {
			// invalid_grant: the grant ended (signed out, revoked, expired). Sign in again.
			end(id)
			http.Redirect(w, r, "/", http.StatusSeeOther)
			return
		}
		// Rotation: the refresh token is single use; keep the new one.
		s.token, s.status = token, "Tokens refreshed"
		http.Redirect(w, r, "/", http.StatusSeeOther)
	})

	http.HandleFunc("/logout", func(w http.ResponseWriter, r *http.Request) {
		id, s := post(w, r)
		if s == nil {
			return
		}
		end(id)
		// Exactly these two parameters. Hosted logout ends the hosted session and every grant of it.
		query := url.Values{"client_id": {clientID}, "post_logout_redirect_uri": {appOrigin + "/signed-out"}}
		http.Redirect(w, r, meta.EndSession+"?"+query.Encode(), http.StatusSeeOther)
	})

	http.HandleFunc("/signed-out", func(w http.ResponseWriter, r *http.Request) {
		page(w, `<h1>Signed out</h1><a href="/login">Sign in again</a>`)
	})

	http.HandleFunc("/disconnect", func(w http.ResponseWriter, r *http.Request) {
		id, s := post(w, r)
		if s == nil {
			return
		}
		// Revocation of the refresh token ends the grant and its access tokens (not the hosted session).
		form := url.Values{"token": {s.token.RefreshToken}, "token_type_hint": {"refresh_token"}}
		req, _ := http.NewRequest(http.MethodPost, meta.Revocation, strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.SetBasicAuth(url.QueryEscape(clientID), url.QueryEscape(secret)) // RFC 6749 §2.3.1
		if res, err := http.DefaultClient.Do(req); err == nil {
			res.Body.Close()
		}
		end(id)
		page(w, fmt.Sprintf("<h1>Disconnected</h1><p id=status>Session check after revocation: HTTP %d</p>", sessionCheck(s.token.AccessToken)))
	})

	port := os.Getenv("PORT")
	if port == "" {
		port = "4000"
	}
	log.Fatal(http.ListenAndServe("localhost:"+port, nil))
}
