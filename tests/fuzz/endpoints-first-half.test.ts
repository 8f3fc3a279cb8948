/** Fuzzing (./endpoints.ts): the first half of the routes. */
import { fuzzHalf } from "./endpoints";

fuzzHalf(0);
