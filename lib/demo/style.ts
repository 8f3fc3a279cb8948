/** The demo application's stylesheet (served at {base}/style.css: its pages carry no inline style). */
export const DEMO_STYLESHEET = `
*, *::before, *::after { box-sizing: border-box; }
body { margin: 0; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; color: #0f172a; background: #f8fafc; }
main { max-width: 48rem; margin: 0 auto; padding: 2rem 1rem 3rem; }
h1 { font-size: 1.6rem; line-height: 1.25; margin: 0 0 .75rem; }
h2 { font-size: 1.1rem; margin: 0 0 .5rem; }
section { background: #fff; border: 1px solid #e2e8f0; border-radius: .75rem; padding: 1rem; margin: 1rem 0; }
p { margin: .5rem 0; }
code { font-family: ui-monospace, SFMono-Regular, Menlo, monospace; font-size: .9em; overflow-wrap: anywhere; }
pre { margin: .5rem 0 0; padding: .75rem; background: #f1f5f9; border-radius: .5rem; overflow-x: auto; font-size: .85rem; white-space: pre-wrap; overflow-wrap: anywhere; }
.hint { background: #eef2ff; border: 1px solid #c7d2fe; border-radius: .5rem; padding: .75rem; }
.events { margin: 0; padding-left: 1.25rem; }
.actions { display: flex; flex-wrap: wrap; gap: .75rem; margin-top: 1rem; }
.actions form { margin: 0; }
button { font: inherit; cursor: pointer; border-radius: .5rem; padding: .6rem 1.1rem; border: 1px solid #4338ca; background: #4338ca; color: #fff; }
button.secondary { background: #fff; color: #3730a3; }
button:hover { background: #3730a3; color: #fff; }
button:focus-visible, a:focus-visible { outline: 3px solid #f59e0b; outline-offset: 2px; }
a { color: #3730a3; }
.ok { color: #15803d; }
.bad { color: #b91c1c; }
footer { margin-top: 2rem; font-size: .9rem; }
`;
