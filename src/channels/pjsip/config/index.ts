// res_pjsip configuration: the declarations of every object and option, pjsip.conf reading, and one
// builder for objects from any source.
export * from './types.ts';
export { buildPjsipConfig, buildPjsipObject, defaultPjsipGlobal, pjsipAttributeNames, pjsipOption, PJSIP_OBJECT_TYPES, type BuildResult } from './build.ts';
export { loadPjsipConf, readPjsipConf, MAX_PJSIP_CONF_BYTES, type PjsipConfRead } from './conf-file.ts';
export { identifyMatchesAddress, networkContains, parseNetwork } from './values.ts';
