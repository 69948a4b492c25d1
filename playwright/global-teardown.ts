// Removes the temporary directory that held the e2e server's database.
import { rmSync } from 'node:fs';

export default async function globalTeardown(): Promise<void> {
  const dir = process.env.RVPLAY_E2E_DIR;
  if (dir) rmSync(dir, { recursive: true, force: true });
}
