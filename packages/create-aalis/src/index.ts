export { type Answers, AnswersSchema, DEPLOYMENT_CHOICES } from './answers.js';
export { CREATE_ERROR_CODES, CreateAalisError, type CreateErrorCode } from './errors.js';
export { configOf, type DependencySource, PROJECT_PACKAGES, packageJsonOf, ZOD_VERSION } from './project.js';
export { type CreateIo, HELP, run } from './run.js';
export { checkTarget, scaffold, TEMPLATE_DIR } from './scaffold.js';
