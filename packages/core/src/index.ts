export { defineService, sameService, type ServiceDescriptor, type ServiceOf } from './service.js';
export {
  type Identity,
  IdentitySchema,
  ORIGIN_CATEGORIES,
  type OriginCategory,
  type OriginTurn,
  OriginTurnSchema,
  originatingTurn,
} from './turn.js';
