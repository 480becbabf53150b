import { ACCOUNT, type Assembly, REGION, type Resolve, resourcesOfType } from './assembly';
import {
  AccessDeniedError,
  compilePolicies,
  KNOWN_MANAGED_POLICIES,
  type PolicyDocument,
  type Principal,
  type PrincipalPolicies,
} from './iam';

/**
 * The template's roles as IAM principals: each role's identity-based
 * policies (its AWS::IAM::Policy resources, its inline `Policies`, and the
 * known AWS managed policies in `ManagedPolicyArns`), resolved to the local
 * ARNs, and who assumes which role (a function's `Role`, a state machine's
 * and a rule target's `RoleArn`).
 */
export class LocalPrincipals {
  private readonly policiesByRole = new Map<string, { name: string; document: PolicyDocument }[]>();
  private readonly compiled = new Map<string, Principal>();
  /** Each function's role (logical id). */
  private readonly functionRoles = new Map<string, string>();
  /** Each function's resource-based policy: who may invoke it (AWS::Lambda::Permission), by function logical id. */
  private readonly invokePermissions = new Map<string, { principal: string; sourceArn?: string }[]>();

  constructor(assembly: Assembly, resolve: Resolve) {
    const { template } = assembly;
    for (const [roleId, role] of resourcesOfType(template, 'AWS::IAM::Role')) {
      const p = role.Properties ?? {};
      if (p.PermissionsBoundary !== undefined) {
        throw new Error(`role ${roleId}: permissions boundaries are not supported locally`);
      }
      const policies: { name: string; document: PolicyDocument }[] = [];
      for (const inline of resolve(p.Policies ?? []) as {
        PolicyName: string;
        PolicyDocument: PolicyDocument;
      }[]) {
        policies.push({ name: inline.PolicyName, document: inline.PolicyDocument });
      }
      for (const arn of resolve(p.ManagedPolicyArns ?? []) as string[]) {
        const name = String(arn).split(':policy/')[1] ?? String(arn);
        const document = KNOWN_MANAGED_POLICIES[name];
        if (!document) {
          throw new Error(
            `role ${roleId}: the managed policy ${arn} is not known locally (see KNOWN_MANAGED_POLICIES)`,
          );
        }
        policies.push({ name, document });
      }
      this.policiesByRole.set(roleId, policies);
    }
    for (const [policyId, policy] of resourcesOfType(template, 'AWS::IAM::Policy')) {
      const p = policy.Properties ?? {};
      if (p.Groups !== undefined || p.Users !== undefined) {
        throw new Error(`policy ${policyId}: only policies attached to roles are supported locally`);
      }
      const document = resolve(p.PolicyDocument) as PolicyDocument;
      for (const roleName of resolve(p.Roles ?? []) as string[]) {
        const policies = this.policiesByRole.get(roleName);
        if (!policies)
          throw new Error(`policy ${policyId} is attached to ${roleName}, not a role of the template`);
        policies.push({ name: String(p.PolicyName ?? policyId), document });
      }
    }
    for (const [functionId, fn] of resourcesOfType(template, 'AWS::Lambda::Function')) {
      this.functionRoles.set(
        functionId,
        this.roleIdOf(String(resolve(fn.Properties?.Role)), `function ${functionId}`),
      );
    }
    for (const [permissionId, permission] of resourcesOfType(template, 'AWS::Lambda::Permission')) {
      const p = resolve(permission.Properties ?? {}) as Record<string, unknown>;
      const functionName = String(p.FunctionName);
      const functionId = functionName.startsWith('arn:') ? functionName.split(':')[6]! : functionName;
      if (!this.functionRoles.has(functionId)) {
        throw new Error(`permission ${permissionId}: ${functionName} is not a function of the template`);
      }
      if (p.Action !== 'lambda:InvokeFunction') continue;
      const grants = this.invokePermissions.get(functionId) ?? [];
      grants.push({
        principal: String(p.Principal),
        ...(p.SourceArn ? { sourceArn: String(p.SourceArn) } : {}),
      });
      this.invokePermissions.set(functionId, grants);
    }
    // Compiled now, so that a policy the local cloud cannot evaluate fails the start, not a call.
    for (const functionId of this.functionRoles.keys()) this.function(functionId);
  }

  /** The role's logical id from its ARN (locally `arn:aws:iam::<account>:role/<logical id>`). */
  roleIdOf(roleArn: string, who: string): string {
    const roleId = roleArn.split(':role/')[1];
    if (!roleId || !this.policiesByRole.has(roleId))
      throw new Error(`${who}: role ${roleArn} is not a role of the template`);
    return roleId;
  }

  /** What a function's sandbox needs to decide its own calls (plain data). */
  functionPolicies(functionId: string): PrincipalPolicies {
    const roleId = this.functionRoles.get(functionId);
    if (!roleId) throw new Error(`no local function ${functionId}`);
    return this.rolePolicies(roleId, functionId);
  }

  /** A function's principal (its role, in a session named after the function, as Lambda does). */
  function(functionId: string): Principal {
    const roleId = this.functionRoles.get(functionId);
    if (!roleId) throw new Error(`no local function ${functionId}`);
    return this.role(roleId, functionId);
  }

  /** The principal of a role assumed by a service (a state machine, a rule target) in the named session. */
  role(roleId: string, session: string): Principal {
    const key = `${roleId}/${session}`;
    let principal = this.compiled.get(key);
    if (!principal) {
      principal = compilePolicies(this.rolePolicies(roleId, session));
      this.compiled.set(key, principal);
    }
    return principal;
  }

  /**
   * Throws Lambda's AccessDeniedException unless the function's
   * resource-based policy lets `service` (e.g. `events.amazonaws.com`) invoke
   * it on behalf of `sourceArn` (a grant without SourceArn allows any source).
   */
  authorizeServiceInvoke(functionId: string, service: string, sourceArn: string) {
    const granted = (this.invokePermissions.get(functionId) ?? []).some(
      (g) => g.principal === service && (g.sourceArn === undefined || g.sourceArn === sourceArn),
    );
    if (!granted) {
      throw new AccessDeniedError(
        service,
        'lambda:InvokeFunction',
        `arn:aws:lambda:${REGION}:${ACCOUNT}:function:${functionId}`,
        'implicitDeny',
        'resource',
      );
    }
  }

  private rolePolicies(roleId: string, session: string): PrincipalPolicies {
    return {
      arn: `arn:aws:sts::${ACCOUNT}:assumed-role/${roleId}/${session}`,
      policies: this.policiesByRole.get(roleId) ?? [],
    };
  }
}
