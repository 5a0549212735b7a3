import { registerDriver } from '../../src/drivers/registry.js';
import { type Driver, driverConfig, item, type Link, ObjectNotFound, type Obj } from '../../src/drivers/types.js';

/** Registers a one-file driver whose file lives behind a URL, as cloud drivers' do (for redirect and proxy tests). */
export function registerUrlDriver(name: string, file: Obj, link: (addition: Record<string, unknown>) => Link): void {
  registerDriver({
    config: driverConfig({ name, localSort: true }),
    additional: [item('token', 'string')],
    create: (addition): Driver => ({
      init: async () => undefined,
      drop: async () => undefined,
      addition: () => addition,
      list: async (p) => {
        if (p !== '/') throw new ObjectNotFound();
        return [file];
      },
      get: async (p) => {
        if (p === '/') return { name: '', size: 0, isDir: true, modified: new Date(0) };
        if (p === `/${file.name}`) return file;
        throw new ObjectNotFound();
      },
      link: async () => link(addition),
    }),
  });
}
