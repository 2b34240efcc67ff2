/** The simulator's public surface: start one, and the types of its contract. */
export { startSimulator, DEFAULT_CREDENTIALS, DEFAULT_SEED } from './startSimulator.js';
export type * from './simulatorTypes.js';
export { userAgentProblem } from './userAgent.js';
export { ANSWER_PROFILES, resolveProfile } from './answerProfile.js';
