// The model's stand-in for the pod's tests is @aalis/model's scripted server: a real HTTP server
// speaking the chat-completions protocol, replaying scripted tool calls; the pod's agent loop,
// tools, sandbox and files are all real.
export { type Script, type ScriptStep as Step, type ScriptedModel as FakeModel, type SeenRequest, startScriptedModel as startFakeModel } from '@aalis/model';
