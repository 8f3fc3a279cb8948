// app/api/auth/[...nextauth]/route.js
import { handlers } from "../../../../auth.js";

export const { GET, POST } = handlers;
