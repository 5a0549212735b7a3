// The web UI's types of the wire's objects are the server's: inferred from the zod shapes
// (src/server/shapes.ts → src/server/wire-types.ts), imported by web/src as types only. Here: the
// web UI typechecks against them (`npm run typecheck:web`), its exported types are those very
// types, and nothing of the server (or zod) is imported by web/src at run time.
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

const root = path.resolve(import.meta.dirname, '../..');
const tsc = path.join(root, 'node_modules/typescript/bin/tsc');
const run = promisify(execFile);

/** Runs tsc; resolves to its output, '' when it found nothing. */
async function typecheck(project: string): Promise<string> {
  try {
    await run(process.execPath, [tsc, '--noEmit', '--pretty', 'false', '-p', project], { cwd: root, timeout: 120_000 });
    return '';
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; message: string };
    return `${e.stdout ?? ''}${e.stderr ?? ''}` || e.message;
  }
}

const tmp = mkdtempSync(path.join(tmpdir(), 'atrium-web-types-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('the web UI types of the wire', () => {
  it('typecheck (tsc --noEmit -p web)', async () => {
    expect(await typecheck(path.join(root, 'web'))).toBe('');
  }, 120_000);

  it("are the types inferred from the server's shapes (the check is not vacuous)", async () => {
    const web = path.join(root, 'web/src/api.ts');
    const wire = path.join(root, 'src/server/wire-types.ts');
    writeFileSync(
      path.join(tmp, 'probe.ts'),
      `import type * as Web from ${JSON.stringify(web.replace(/\.ts$/, ''))};
import type * as Wire from ${JSON.stringify(wire.replace(/\.ts$/, ''))};
type Same<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
const checks: [
  Same<Web.Obj, Wire.Obj>, Same<Web.ListResp, Wire.ListResp>, Same<Web.GetResp, Wire.GetResp>, Same<Web.User, Wire.User>,
  Same<Web.Storage, Wire.Storage>, Same<Web.Meta, Wire.Meta>, Same<Web.Task, Wire.Task>, Same<Web.TaskKind, Wire.TaskKind>,
  Same<Web.Setting, Wire.Setting>, Same<Web.SshKey, Wire.SshKey>, Same<Web.S3Key, Wire.S3Key>, Same<Web.AppPassword, Wire.AppPassword>,
  Same<Web.Passkey, Wire.Passkey>, Same<Web.Share, Wire.Share>, Same<Web.UploadSnapshot, Wire.UploadSnapshot>,
  Same<Web.ArchiveMeta, Wire.ArchiveMeta>, Same<Web.TrashEntry, Wire.TrashEntry>, Same<Web.WopiSession, Wire.WopiSession>, Same<Web.SyncJob, Wire.SyncJob>, Same<Web.SyncReport, Wire.SyncReport>,
  Same<Web.About, Wire.About>, Same<Web.ImportReport, Wire.ImportReport>,
  // a field only the shape has, so a hand-written copy would not pass
  Same<Web.Obj['hash_info'], Record<string, string> | null>,
] = [true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true, true];
export default checks;
// and a field the shapes do not have is an error
// @ts-expect-error
export const missing: Web.Obj['no_such_field'] = 0;
`,
    );
    writeFileSync(
      path.join(tmp, 'tsconfig.json'),
      JSON.stringify({ extends: path.join(root, 'web/tsconfig.json'), compilerOptions: { noUnusedLocals: false }, include: [], files: ['probe.ts'] }),
    );
    expect(await typecheck(tmp)).toBe('');
  }, 120_000);

  it('are imported as types only: no server code or zod in the bundle', () => {
    const files = (readdirSync(path.join(root, 'web/src'), { recursive: true }) as string[]).filter((f) => /\.tsx?$/.test(f));
    expect(files.length).toBeGreaterThan(20);
    const found: string[] = [];
    for (const f of files) {
      const text = readFileSync(path.join(root, 'web/src', f), 'utf8');
      for (const m of text.matchAll(/^\s*(import|export)\b([^;]*?)\bfrom\s+['"]([^'"]+)['"]/gms)) {
        const [, verb, what, spec] = m as unknown as [string, string, string, string];
        const outside = spec === 'zod' || spec.startsWith('zod/') || path.resolve(root, 'web/src', path.dirname(f), spec).startsWith(path.join(root, 'src') + path.sep);
        if (!outside) continue;
        found.push(`${f}: ${verb}${what.trimEnd()} from '${spec}'`);
      }
    }
    // the one import of the server, and it is a type export
    expect(found.filter((l) => !/^\S+: (import|export) type\b/.test(l))).toEqual([]);
    expect(found.length).toBeGreaterThan(0);
  });
});
