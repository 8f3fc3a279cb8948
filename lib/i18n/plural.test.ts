import { describe, expect, it } from "vitest";
import { countOf, pluralForm } from "./plural";

describe("counts and their nouns", () => {
  it("takes the singular for one only, in English", () => {
    expect(countOf(1, "user", "users")).toBe("1 user");
    expect(countOf(0, "user", "users")).toBe("0 users");
    expect(countOf(2, "user", "users")).toBe("2 users");
    expect(countOf(21, "active grant", "active grants")).toBe("21 active grants");
  });

  it("follows the language's rule: in French 0 and 1 are singular", () => {
    expect(pluralForm(0, "utilisateur", "utilisateurs", "fr")).toBe("utilisateur");
    expect(pluralForm(1, "Benutzer", "Benutzer", "de")).toBe("Benutzer");
    expect(countOf(2, "code", "codes", "fr")).toBe("2 codes");
  });
});
