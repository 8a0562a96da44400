// An example plugin: two tools that keep notes in the conversation's main directory. It shows
// what every plugin does: declare what it needs (`inject`), validate its config with its own
// schema, register tools, and act only through the call's credential — judged first, written
// through the safe file layer (no symlink followed, no half-written file), asked of the owner when
// the write is outside the conversation's reach.
import { join } from 'node:path';
import { definePlugin, defineTool, readFileNoFollow, ToolError, tools, writeFileAtomic } from '@aalis/core';
import { realPathOf } from '@aalis/plugin-reach';
import { credentialOf, requireOrThrow } from '@aalis/plugin-tools';
import { z } from 'zod';

const NotesConfig = z.object({ dir: z.string().min(1).default('notes') }).strict();
const NoteName = z.string().regex(/^[\w-]{1,64}$/, 'a note name is 1-64 letters, digits, _ or -');

export default definePlugin({
  name: 'notes',
  inject: [tools],
  config: NotesConfig,
  apply(ctx, config) {
    // Judged as a real path (symlinks resolved), as every reach decision is.
    const where = (home, name) => realPathOf(join(config.dir, `${name}.md`), home);
    const saveNote = defineTool({
      name: 'save_note',
      description: 'Save a note (markdown) in the notes folder of the main directory.',
      params: z.object({ name: NoteName, text: z.string().max(100_000) }).strict(),
      risk: 'medium',
      async handler(call, params) {
        const credential = credentialOf(call);
        if (credential.home === undefined) throw new ToolError('denied', 'this conversation has no main directory to keep notes in.');
        const path = await where(credential.home, params.name);
        await requireOrThrow(credential, { effect: 'write', path }); // asks the owner when outside the reach
        await writeFileAtomic(path, params.text, { createParents: true });
        return { path, bytes: Buffer.byteLength(params.text) };
      },
    });
    const readNote = defineTool({
      name: 'read_note',
      description: 'Read a note saved with save_note.',
      params: z.object({ name: NoteName }).strict(),
      risk: 'low',
      async handler(call, params) {
        const credential = credentialOf(call);
        if (credential.home === undefined) throw new ToolError('denied', 'this conversation has no main directory.');
        const path = await where(credential.home, params.name);
        await requireOrThrow(credential, { effect: 'read', path });
        return { path, text: (await readFileNoFollow(path, 1024 * 1024)).toString('utf8') };
      },
    });
    ctx.onDispose(ctx.get(tools).register(saveNote));
    ctx.onDispose(ctx.get(tools).register(readNote));
  },
});
