import { execFileSync } from 'node:child_process';

/** The CLI tests run the real `bin/atrium.js`, so the bundle must match the sources. */
export default function setup(): void {
  execFileSync('npm', ['run', '--silent', 'build'], { stdio: 'inherit' });
}
