// Starts the one real Foundry every test shares (start.ts), with an
// administrator key and an emergency-freeze signer the tests know. The
// tests read where it is from the environment this sets (Playwright's
// workers inherit it), and the returned function stops it and removes its
// data.
import { startFoundry } from "./start";

export default async function globalSetup() {
  const foundry = await startFoundry();
  process.env.FOUNDRY_BASE_URL = foundry.base;
  process.env.FOUNDRY_TEST_ADMIN_KEY = foundry.adminKey;
  process.env.FOUNDRY_TEST_SIGNER = foundry.signer;
  return foundry.stop;
}
