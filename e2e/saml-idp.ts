/**
 * A real SAML 2.0 identity provider for tests: Debian's SimpleSAMLphp (1.19) served by PHP's
 * built-in web server on loopback, with a configuration written to a temporary folder for one
 * service provider and a few users (exampleauth:UserPass, its ordinary login form).
 *
 * Plain Node APIs only, so Playwright specs and vitest tests can both use it. Nothing outside the
 * temporary folder is written: SimpleSAMLphp reads its configuration from SIMPLESAMLPHP_CONFIG_DIR,
 * and that configuration puts its metadata, key pair, sessions, logs and caches in the same folder.
 */
import { execFile, spawn, spawnSync, type ChildProcess } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";

/** Where Debian's simplesamlphp package installs the application; www/ is its document root. */
const SIMPLESAMLPHP = "/usr/share/simplesamlphp";

const NAMEID_FORMATS = {
  persistent: "urn:oasis:names:tc:SAML:2.0:nameid-format:persistent",
  transient: "urn:oasis:names:tc:SAML:2.0:nameid-format:transient",
  emailAddress: "urn:oasis:names:tc:SAML:1.1:nameid-format:emailAddress",
  unspecified: "urn:oasis:names:tc:SAML:1.1:nameid-format:unspecified",
} as const;

const SIGNATURE_ALGORITHMS = {
  "rsa-sha256": "http://www.w3.org/2001/04/xmldsig-more#rsa-sha256",
  "rsa-sha1": "http://www.w3.org/2000/09/xmldsig#rsa-sha1",
} as const;

/** The attribute that carries the username to the NameID filters; removed before the assertion is built. */
const USERNAME_ATTRIBUTE = "saml-idp-username";

export type SamlNameIdFormat = keyof typeof NAMEID_FORMATS;

export interface SamlIdpUser {
  /** The login form's username (no ':'): also the NameID for the emailAddress and unspecified formats. */
  username: string;
  password: string;
  /** Released as they are, names included (e.g. http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress). */
  attributes: Record<string, string[]>;
}

export interface SamlIdpOptions {
  /** Loopback port for PHP's web server; a free one when omitted. */
  port?: number;
  /** Defaults to the metadata URL, as SimpleSAMLphp's own default does. */
  entityId?: string;
  sp: {
    entityId: string;
    /** The HTTP-POST AssertionConsumerService, the only one the IdP answers to. */
    acsUrl: string;
    /** Required by encryptAssertion. */
    encryptionCertificatePem?: string;
    /** When given, the IdP accepts only AuthnRequests signed with its key. */
    signingCertificatePem?: string;
  };
  users: SamlIdpUser[];
  /** Default persistent: an opaque value per user and SP (see nameIdOf). */
  nameIdFormat?: SamlNameIdFormat;
  /** Default false: a signature on the Response element. */
  signResponse?: boolean;
  /** Default true: a signature on the Assertion element. */
  signAssertion?: boolean;
  /** Default rsa-sha256; rsa-sha1 also makes the digests SHA-1. */
  signatureAlgorithm?: keyof typeof SIGNATURE_ALGORITHMS;
  /** Default false: RSA-OAEP key transport, AES-128-CBC content (SimpleSAMLphp's choice). */
  encryptAssertion?: boolean;
  /** The IdP's signing key pair (default: a fresh one), so a connection can be set up before the IdP starts. */
  keys?: { certificatePem: string; privateKeyPem: string };
}

export interface SamlIdp {
  entityId: string;
  /** The SingleSignOnService (HTTP-Redirect and HTTP-POST bindings). */
  ssoUrl: string;
  metadataUrl: string;
  metadataXml: string;
  /** The IdP's signing certificate (generated for this start). */
  certificatePem: string;
  /** Starts an IdP-initiated (unsolicited) sign-in for the SP. */
  idpInitiatedUrl: string;
  /** The NameID value the IdP asserts for a user (not for the transient format, which is random each time). */
  nameIdOf(username: string): string;
  /**
   * What a browser does with plain fetch: follows `url` (an AuthnRequest URL, or idpInitiatedUrl),
   * submits the login form when the IdP shows it, and returns the auto-submitted form's POST to the
   * SP. Pass the returned cookies back to sign in again within the IdP's session (no form then).
   */
  signIn(url: string, user?: { username: string; password: string }, cookies?: Map<string, string>): Promise<SamlPost>;
  stop(): Promise<void>;
}

/** The HTTP-POST binding's form, as the IdP's page would submit it to the SP. */
export interface SamlPost {
  /** The form's action: the SP's AssertionConsumerService. */
  acsUrl: string;
  SAMLResponse: string;
  RelayState?: string;
  /** The IdP's cookies after the sign-in. */
  cookies: Map<string, string>;
}

/** null when everything the IdP needs is installed; else what is missing, for a skip reason. */
export function samlIdpMissing(): string | null {
  const missing: string[] = [];
  const php = spawnSync("php", ["-m"], { encoding: "utf8" });
  if (php.error || php.status !== 0) missing.push("php-cli");
  else {
    const modules = php.stdout.split("\n").map((line) => line.trim().toLowerCase());
    // DOM (php-xml) signs and encrypts; mbstring is optional (SimpleSAMLphp ships Symfony's polyfill).
    if (!modules.includes("dom")) missing.push("php-xml (PHP's dom)");
  }
  if (!existsSync(path.join(SIMPLESAMLPHP, "www", "_include.php"))) missing.push(`simplesamlphp (${SIMPLESAMLPHP})`);
  const openssl = spawnSync("openssl", ["version"], { encoding: "utf8" });
  if (openssl.error || openssl.status !== 0) missing.push("openssl");
  return missing.length ? missing.join(", ") : null;
}

/** A fresh RSA key pair and a self-signed certificate for it, made with openssl (an IdP's, or an SP's for signing or encryption). */
export async function selfSignedCertificate(commonName: string): Promise<{ certificatePem: string; privateKeyPem: string }> {
  const dir = await mkdtemp(path.join(tmpdir(), "saml-cert-"));
  try {
    const keyFile = path.join(dir, "key.pem");
    const certFile = path.join(dir, "cert.pem");
    await new Promise<void>((resolve, reject) =>
      execFile(
        "openssl",
        ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-sha256", "-days", "7", "-subj", `/CN=${commonName.replace(/[/\\=+,]/g, " ")}`, "-keyout", keyFile, "-out", certFile],
        (error, _stdout, stderr) => (error ? reject(new Error(`openssl could not make a key pair: ${stderr || error.message}`)) : resolve()),
      ),
    );
    return { certificatePem: await readFile(certFile, "utf8"), privateKeyPem: await readFile(keyFile, "utf8") };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** A loopback port nothing listens on right now. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer().once("error", reject).listen(0, "127.0.0.1", () => {
      const address = probe.address();
      const port = typeof address === "object" && address ? address.port : 0;
      probe.close(() => resolve(port));
    });
  });
}

/** A PHP literal for a JSON-like value (strings single-quoted: no interpolation). */
function php(value: unknown, indent = ""): string {
  if (value === null || value === undefined) return "null";
  if (typeof value === "boolean") return value ? "true" : "false";
  if (typeof value === "number") {
    if (!Number.isFinite(value)) throw new Error(`not a PHP number: ${value}`);
    return String(value);
  }
  if (typeof value === "string") return `'${value.replace(/\\/g, "\\\\").replace(/'/g, "\\'")}'`;
  const inner = `${indent}  `;
  if (Array.isArray(value)) return `[\n${value.map((v) => `${inner}${php(v, inner)},\n`).join("")}${indent}]`;
  if (typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>);
    return `[\n${entries.map(([k, v]) => `${inner}${/^\d+$/.test(k) ? k : php(k)} => ${php(v, inner)},\n`).join("")}${indent}]`;
  }
  throw new Error(`not a PHP value: ${typeof value}`);
}

const phpFile = (variable: string, value: unknown) => `<?php\n${variable} = ${php(value)};\n`;

/** The certificate's base64 body, as SimpleSAMLphp's certData wants it. */
function certData(pem: string): string {
  const body = /-----BEGIN CERTIFICATE-----([\s\S]+?)-----END CERTIFICATE-----/.exec(pem);
  if (!body) throw new Error("not a PEM certificate");
  return body[1]!.replace(/\s+/g, "");
}

function validate(options: SamlIdpOptions): void {
  if (options.port !== undefined && (!Number.isInteger(options.port) || options.port < 1 || options.port > 65535)) throw new Error(`invalid port ${options.port}`);
  if (!options.users.length) throw new Error("the IdP needs at least one user");
  for (const user of options.users) {
    if (!user.username || user.username.includes(":")) throw new Error(`invalid username ${JSON.stringify(user.username)} (empty or with ':')`);
    if (!user.password) throw new Error(`user ${user.username} has no password`);
    if (USERNAME_ATTRIBUTE in user.attributes) throw new Error(`the attribute name ${USERNAME_ATTRIBUTE} is the IdP's own`);
  }
  if (options.encryptAssertion && !options.sp.encryptionCertificatePem) throw new Error("encryptAssertion needs sp.encryptionCertificatePem");
}

async function waitForMetadata(url: string, child: ChildProcess, diagnostics: () => Promise<string>): Promise<string> {
  const deadline = Date.now() + 20_000;
  let last = "";
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`SimpleSAMLphp's web server exited (${child.exitCode}):\n${await diagnostics()}`);
    let response: Response;
    try {
      response = await fetch(url, { signal: AbortSignal.timeout(5_000) });
    } catch (error) {
      // Not listening yet.
      last = String(error);
      await new Promise((resolve) => setTimeout(resolve, 100));
      continue;
    }
    const body = await response.text();
    if (response.ok && body.includes("IDPSSODescriptor")) return body;
    throw new Error(`SimpleSAMLphp served no metadata at ${url} (HTTP ${response.status}): ${errorOf(body)}\n${await diagnostics()}`);
  }
  throw new Error(`SimpleSAMLphp did not answer at ${url}: ${last}\n${await diagnostics()}`);
}

/** Writes the configuration, starts PHP's web server and resolves once the IdP's metadata is served. */
export async function startSamlIdp(options: SamlIdpOptions): Promise<SamlIdp> {
  validate(options);
  const port = options.port ?? (await freePort());
  const origin = `http://127.0.0.1:${port}`;
  const metadataUrl = `${origin}/saml2/idp/metadata.php`;
  const entityId = options.entityId ?? metadataUrl;
  const format = NAMEID_FORMATS[options.nameIdFormat ?? "persistent"];
  // Derived, not random: the same IdP (entity ID) asserts the same persistent NameIDs after a restart.
  const secretSalt = createHash("sha256").update(`saml-idp ${entityId}`).digest("hex");

  const dir = await mkdtemp(path.join(tmpdir(), "saml-idp-"));
  let child: ChildProcess | undefined;
  const stop = async () => {
    if (child && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child!.once("exit", resolve));
      child.kill("SIGTERM");
      await exited;
    }
    await rm(dir, { recursive: true, force: true });
  };

  try {
    const folder = (name: string) => path.join(dir, name);
    for (const name of ["config", "metadata", "cert", "log", "data", "tmp", "sessions"]) await mkdir(folder(name));

    const idpKeys = options.keys ?? (await selfSignedCertificate("SimpleSAMLphp test IdP"));
    const certificatePem = idpKeys.certificatePem;
    await writeFile(path.join(folder("cert"), "idp.crt"), idpKeys.certificatePem);
    await writeFile(path.join(folder("cert"), "idp.key"), idpKeys.privateKeyPem, { mode: 0o600 });

    await writeFile(path.join(folder("config"), "config.php"), phpFile("$config", {
      baseurlpath: `${origin}/`,
      certdir: `${folder("cert")}/`,
      loggingdir: `${folder("log")}/`,
      datadir: `${folder("data")}/`,
      tempdir: folder("tmp"),
      metadatadir: `${folder("metadata")}/`,
      secretsalt: secretSalt,
      "auth.adminpassword": randomBytes(18).toString("base64url"),
      "admin.checkforupdates": false,
      technicalcontact_name: "Test",
      technicalcontact_email: "test@example.com",
      timezone: "UTC",
      "enable.saml20-idp": true,
      "module.enable": { exampleauth: true, core: true, saml: true },
      // Plain HTTP on loopback: a Secure cookie would not come back.
      "session.cookie.secure": false,
      "session.cookie.samesite": null,
      "language.cookie.secure": false,
      "language.cookie.samesite": null,
      "session.phpsession.savepath": folder("sessions"),
      "store.type": "phpsession",
      "logging.handler": "file",
      "logging.logfile": "simplesamlphp.log",
      "logging.level": 6,
      "statistics.out": [],
      showerrors: true,
      errorreporting: false,
      debug: { saml: false, backtraces: true, validatexml: false },
      "language.default": "en",
    }));

    // exampleauth:UserPass: the class first, then "username:password" => attributes.
    const users: Record<string, unknown> = { 0: "exampleauth:UserPass" };
    for (const user of options.users) users[`${user.username}:${user.password}`] = { ...user.attributes, [USERNAME_ATTRIBUTE]: [user.username] };
    await writeFile(path.join(folder("config"), "authsources.php"), phpFile("$config", { users }));

    const nameIdFilter = format === NAMEID_FORMATS.persistent
      ? { class: "saml:PersistentNameID", attribute: USERNAME_ATTRIBUTE }
      : format === NAMEID_FORMATS.transient
        ? { class: "saml:TransientNameID" }
        : { class: "saml:AttributeNameID", Format: format, attribute: USERNAME_ATTRIBUTE };
    await writeFile(path.join(folder("metadata"), "saml20-idp-hosted.php"), phpFile(`$metadata[${php(entityId)}]`, {
      host: "__DEFAULT__",
      privatekey: "idp.key",
      certificate: "idp.crt",
      auth: "users",
      NameIDFormat: format,
      "signature.algorithm": SIGNATURE_ALGORITHMS[options.signatureAlgorithm ?? "rsa-sha256"],
      "saml20.sign.response": options.signResponse ?? false,
      "saml20.sign.assertion": options.signAssertion ?? true,
      "assertion.encryption": options.encryptAssertion ?? false,
      authproc: {
        10: nameIdFilter,
        90: { class: "core:PHP", code: `unset($attributes[${php(USERNAME_ATTRIBUTE)}]);` },
      },
    }));

    const spKeys: { encryption: boolean; signing: boolean; type: string; X509Certificate: string }[] = [];
    if (options.sp.encryptionCertificatePem) {
      spKeys.push({ encryption: true, signing: false, type: "X509Certificate", X509Certificate: certData(options.sp.encryptionCertificatePem) });
    }
    if (options.sp.signingCertificatePem) {
      spKeys.push({ encryption: false, signing: true, type: "X509Certificate", X509Certificate: certData(options.sp.signingCertificatePem) });
    }
    await writeFile(path.join(folder("metadata"), "saml20-sp-remote.php"), phpFile(`$metadata[${php(options.sp.entityId)}]`, {
      AssertionConsumerService: [{ Binding: "urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST", Location: options.sp.acsUrl }],
      NameIDFormat: format,
      "validate.authnrequest": Boolean(options.sp.signingCertificatePem),
      ...(spKeys.length ? { keys: spKeys } : {}),
    }));

    child = spawn("php", ["-S", `127.0.0.1:${port}`, "-t", path.join(SIMPLESAMLPHP, "www")], {
      cwd: dir,
      env: { ...process.env, SIMPLESAMLPHP_CONFIG_DIR: folder("config") },
      stdio: ["ignore", "ignore", "pipe"],
    });
    let serverOutput = "";
    child.stderr!.on("data", (chunk: Buffer) => {
      serverOutput = (serverOutput + chunk.toString()).slice(-4000);
    });
    const diagnostics = async () => {
      const log = await readFile(path.join(folder("log"), "simplesamlphp.log"), "utf8").catch(() => "");
      return `${serverOutput}\n${log.slice(-4000)}`;
    };
    const metadataXml = await waitForMetadata(metadataUrl, child, diagnostics);

    return {
      entityId,
      ssoUrl: `${origin}/saml2/idp/SSOService.php`,
      metadataUrl,
      metadataXml,
      certificatePem,
      idpInitiatedUrl: `${origin}/saml2/idp/SSOService.php?spentityid=${encodeURIComponent(options.sp.entityId)}`,
      nameIdOf(username: string) {
        if (format === NAMEID_FORMATS.transient) throw new Error("a transient NameID differs at each sign-in");
        if (format !== NAMEID_FORMATS.persistent) return username;
        // saml:PersistentNameID's derivation (modules/saml/lib/Auth/Process/PersistentNameID.php).
        const part = (value: string) => `${Buffer.byteLength(value)}:${value}`;
        return createHash("sha1")
          .update(`uidhashbase${secretSalt}${part(entityId)}${part(options.sp.entityId)}${part(username)}${secretSalt}`)
          .digest("hex");
      },
      signIn: (url, user, cookies) => signIn(url, user, cookies ?? new Map()),
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

const ENTITIES: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'" };
const decodeEntities = (text: string) =>
  text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (whole, name: string) =>
    name[0] === "#" ? String.fromCodePoint(name[1] === "x" || name[1] === "X" ? parseInt(name.slice(2), 16) : parseInt(name.slice(1), 10)) : (ENTITIES[name] ?? whole));

/** SimpleSAMLphp shows its errors as pages answered 200, the cause in their debug information. */
function errorOf(html: string): string {
  const cause = /Caused by: ([^\n<]+)/.exec(html)?.[1] ?? /<title>([^<]*)<\/title>/i.exec(html)?.[1];
  return cause ? decodeEntities(cause.trim()) : html.slice(0, 2000);
}

/** The first form of the page: its action (resolved) and its named inputs' values. */
function firstForm(html: string, pageUrl: string): { action: string; fields: Record<string, string> } | null {
  const form = /<form\b([^>]*)>([\s\S]*?)<\/form>/i.exec(html);
  if (!form) return null;
  const attribute = (tag: string, name: string) => {
    const match = new RegExp(`\\b${name}\\s*=\\s*("([^"]*)"|'([^']*)')`, "i").exec(tag);
    return match ? decodeEntities(match[2] ?? match[3] ?? "") : undefined;
  };
  const fields: Record<string, string> = {};
  for (const input of form[2]!.match(/<input\b[^>]*>/gi) ?? []) {
    const name = attribute(input, "name");
    if (name) fields[name] = attribute(input, "value") ?? "";
  }
  return { action: new URL(attribute(form[1]!, "action") ?? "", pageUrl).toString(), fields };
}

async function signIn(url: string, user: { username: string; password: string } | undefined, cookies: Map<string, string>): Promise<SamlPost> {
  const request = async (target: string, body?: URLSearchParams) => {
    const response = await fetch(target, {
      method: body ? "POST" : "GET",
      body,
      redirect: "manual",
      headers: { cookie: [...cookies].map(([name, value]) => `${name}=${value}`).join("; ") },
      signal: AbortSignal.timeout(10_000),
    });
    for (const cookie of response.headers.getSetCookie()) {
      const [pair] = cookie.split(";");
      const at = pair!.indexOf("=");
      if (at > 0) cookies.set(pair!.slice(0, at).trim(), pair!.slice(at + 1).trim());
    }
    return response;
  };
  let target = url;
  let body: URLSearchParams | undefined;
  let submittedLogin = false;
  for (let step = 0; step < 10; step++) {
    const response = await request(target, body);
    body = undefined;
    const location = response.headers.get("location");
    if (response.status >= 300 && response.status < 400 && location) {
      target = new URL(location, target).toString();
      continue;
    }
    const html = await response.text();
    const form = firstForm(html, target);
    if (!response.ok || !form) throw new Error(`the IdP answered ${response.status} at ${target}: ${errorOf(html)}`);
    if (form.fields.SAMLResponse !== undefined) {
      const { SAMLResponse, RelayState } = form.fields;
      return { acsUrl: form.action, SAMLResponse, ...(RelayState !== undefined ? { RelayState } : {}), cookies };
    }
    if ("username" in form.fields && "AuthState" in form.fields) {
      if (!user) throw new Error("the IdP asks for a username and password, and none were given");
      if (submittedLogin) throw new Error(`the IdP refused the username and password of ${user.username}`);
      submittedLogin = true;
      target = form.action;
      body = new URLSearchParams({ ...form.fields, username: user.username, password: user.password });
      continue;
    }
    throw new Error(`the IdP showed an unexpected form at ${target}:\n${html.slice(0, 2000)}`);
  }
  throw new Error(`the IdP redirected too often from ${url}`);
}
