/**
 * SHA-256 of a short UTF-8 string as hex, synchronous: the proof of work's solver
 * (./bot-challenge.tsx) tries thousands a millisecond this way, where the browser's own
 * (crypto.subtle) answers each in a promise.
 */
const K = new Uint32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe,
  0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7,
  0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b,
  0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
  0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
]);
const W = new Uint32Array(64);
const encoder = new TextEncoder();

export function sha256Hex(text: string): string {
  const data = encoder.encode(text);
  const blocks = Math.ceil((data.length + 9) / 64);
  const bytes = new Uint8Array(blocks * 64);
  bytes.set(data);
  bytes[data.length] = 0x80;
  const bits = data.length * 8;
  bytes[bytes.length - 4] = bits >>> 24;
  bytes[bytes.length - 3] = bits >>> 16;
  bytes[bytes.length - 2] = bits >>> 8;
  bytes[bytes.length - 1] = bits;
  const h = new Int32Array(INITIAL);
  for (let o = 0; o < bytes.length; o += 64) compress(h, bytes, o);
  let out = "";
  for (const v of h) out += (v >>> 0).toString(16).padStart(8, "0");
  return out;
}

/** One 64-byte block into the state `h` (eight words), from `bytes` at `offset`. */
function compress(h: Int32Array, bytes: Uint8Array, offset: number): void {
  for (let i = 0; i < 16; i++) {
    const o = offset + i * 4;
    W[i] = (bytes[o] << 24) | (bytes[o + 1] << 16) | (bytes[o + 2] << 8) | bytes[o + 3];
  }
  for (let i = 16; i < 64; i++) {
    const x = W[i - 15], y = W[i - 2];
    const s0 = ((x >>> 7) | (x << 25)) ^ ((x >>> 18) | (x << 14)) ^ (x >>> 3);
    const s1 = ((y >>> 17) | (y << 15)) ^ ((y >>> 19) | (y << 13)) ^ (y >>> 10);
    W[i] = (W[i - 16] + s0 + W[i - 7] + s1) | 0;
  }
  let a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], hh = h[7];
  for (let i = 0; i < 64; i++) {
    const S1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
    const t1 = (hh + S1 + ((e & f) ^ (~e & g)) + K[i] + W[i]) | 0;
    const S0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
    const t2 = (S0 + ((a & b) ^ (a & c) ^ (b & c))) | 0;
    hh = g;
    g = f;
    f = e;
    e = (d + t1) | 0;
    d = c;
    c = b;
    b = a;
    a = (t1 + t2) | 0;
  }
  h[0] = (h[0] + a) | 0;
  h[1] = (h[1] + b) | 0;
  h[2] = (h[2] + c) | 0;
  h[3] = (h[3] + d) | 0;
  h[4] = (h[4] + e) | 0;
  h[5] = (h[5] + f) | 0;
  h[6] = (h[6] + g) | 0;
  h[7] = (h[7] + hh) | 0;
}

const INITIAL = new Int32Array([0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19]);

/**
 * The proof of work's search, fast: the number n in [from, to] whose SHA-256 of `salt` followed by
 * n's decimal digits is `target` (hex), or null. The salt's whole blocks are hashed once (their
 * state kept), and each try hashes only the tail: its digits, the padding and the length.
 */
export function findNumber(salt: string, target: string, from: number, to: number): number | null {
  const prefix = encoder.encode(salt);
  const whole = Math.floor(prefix.length / 64) * 64;
  const mid = new Int32Array(INITIAL);
  for (let o = 0; o < whole; o += 64) compress(mid, prefix, o);
  const rest = prefix.subarray(whole);
  const want = new Int32Array(8);
  for (let i = 0; i < 8; i++) want[i] = parseInt(target.slice(i * 8, i * 8 + 8), 16) | 0;
  const tail = new Uint8Array(128);
  const h = new Int32Array(8);
  for (let n = from; n <= to; n++) {
    const digits = String(n);
    const used = rest.length + digits.length;
    const blocks = used + 9 <= 64 ? 1 : 2;
    tail.fill(0);
    tail.set(rest);
    for (let i = 0; i < digits.length; i++) tail[rest.length + i] = digits.charCodeAt(i);
    tail[used] = 0x80;
    const bits = (prefix.length + digits.length) * 8;
    const end = blocks * 64;
    tail[end - 4] = bits >>> 24;
    tail[end - 3] = bits >>> 16;
    tail[end - 2] = bits >>> 8;
    tail[end - 1] = bits;
    h.set(mid);
    compress(h, tail, 0);
    if (blocks === 2) compress(h, tail, 64);
    if (h[0] === want[0] && h[1] === want[1] && h[2] === want[2] && h[3] === want[3] && h[4] === want[4] && h[5] === want[5] && h[6] === want[6] && h[7] === want[7]) return n;
  }
  return null;
}
