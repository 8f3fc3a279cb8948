"use client";

import { useEffect, useRef, useState } from "react";
import { findNumber } from "./sha256";

/**
 * The proof of work a protected form asks (lib/authn/bot-challenge, ALTCHA's protocol): the page
 * hands over a challenge; this finds the number whose SHA-256 with the challenge's salt is the
 * challenge, in slices that leave the page responsive, and puts the solution in every form of the
 * card (field `altcha`). A form submitted before it is done waits for it, then goes. Nothing is
 * fetched from anywhere. Without script the page says why the step cannot go on here.
 */
export function BotChallenge({ challenge, working, done, noScript }: { challenge: string; working: string; done: string; noScript: string }) {
  const box = useRef<HTMLDivElement>(null);
  const [state, setState] = useState<"working" | "done">("working");

  useEffect(() => {
    const card = box.current?.closest("main");
    if (!card) return;
    const parsed = JSON.parse(challenge) as { algorithm: string; challenge: string; maxnumber: number; salt: string; signature: string };
    let solution: string | null = null;
    let cancelled = false;
    const waiting: { form: HTMLFormElement; submitter: HTMLElement | null }[] = [];

    const fill = () => {
      for (const form of card.querySelectorAll<HTMLFormElement>("form[method='post']")) {
        let field = form.querySelector<HTMLInputElement>("input[name='altcha']");
        if (!field) {
          field = document.createElement("input");
          field.type = "hidden";
          field.name = "altcha";
          form.appendChild(field);
        }
        field.value = solution ?? "";
      }
    };
    const onSubmit = (event: SubmitEvent) => {
      if (solution !== null) return;
      event.preventDefault();
      waiting.push({ form: event.target as HTMLFormElement, submitter: event.submitter });
    };
    card.addEventListener("submit", onSubmit, true);

    let n = 0;
    const slice = () => {
      if (cancelled) return;
      const end = Math.min(n + 20_000, parsed.maxnumber);
      const found = findNumber(parsed.salt, parsed.challenge, n, end);
      n = end + 1;
      if (found !== null) {
        solution = btoa(JSON.stringify({ algorithm: parsed.algorithm, challenge: parsed.challenge, number: found, salt: parsed.salt, signature: parsed.signature }));
        fill();
        setState("done");
        for (const w of waiting.splice(0)) w.form.requestSubmit(w.submitter && w.form.contains(w.submitter) ? (w.submitter as HTMLButtonElement) : undefined);
        return;
      }
      if (n <= parsed.maxnumber) setTimeout(slice, 0);
    };
    setTimeout(slice, 0);
    return () => {
      cancelled = true;
      card.removeEventListener("submit", onSubmit, true);
    };
  }, [challenge]);

  return (
    <div ref={box} className="mb-4">
      <p role="status" aria-live="polite" className="text-sm text-slate-600">
        {state === "working" ? working : done}
      </p>
      <noscript>
        <p className="mt-2 text-sm text-slate-600">{noScript}</p>
      </noscript>
    </div>
  );
}
