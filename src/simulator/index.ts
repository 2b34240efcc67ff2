/** The simulator's public surface: start one, and the types of its contract. */
export { startSimulator, DEFAULT_CREDENTIALS } from './startSimulator.js';
export type * from './simulatorTypes.js';
export { ANSWER_PROFILES } from './answerProfile.js';
