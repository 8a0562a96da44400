// The first module of the `aalis exec` bundle (exec-main.ts imports it before anything else):
// zod's `jitless`, set before any schema is made (zod reads it as each schema is constructed).
// With it on (zod's default), an object schema's first parse generates and compiles a parser
// (`new Function`) that pays off over many parses; a one-shot `aalis exec` parses each schema once
// or twice, so it would pay every compile and use none. Validation is the same either way.
import { config } from 'zod';

config({ jitless: true });
