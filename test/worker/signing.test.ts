import { signingSuite } from '../shared/signing-suite.ts';

signingSuite('workerd');
