// Run as an ordinary user by layer-removal.test.ts: removes the layers in argv[2] by name, prints whether that worked.
import { removeKnownLayers } from './overlay-mount.js';

process.stdout.write(`${removeKnownLayers(process.argv[2]!)}\n`);
