/** Fuzzing (./endpoints.ts): the second half of the routes and the hosted pages. */
import { fuzzHalf } from "./endpoints";

fuzzHalf(1);
