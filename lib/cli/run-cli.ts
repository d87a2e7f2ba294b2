import { htpasswd, htpasswdHelp } from './htpasswd.js';
import { UsageError, type CliIo } from './io.js';
import { keygen, keygenHelp } from './keygen.js';
import { registryConfig, registryConfigHelp } from './registry-config.js';
import { rootlessCgroups, rootlessCgroupsHelp } from './rootless-cgroups.js';

const COMMANDS: Record<string, { run: (args: string[], io: CliIo) => Promise<number>; help: string }> = {
  keygen: { run: keygen, help: keygenHelp },
  htpasswd: { run: htpasswd, help: htpasswdHelp },
  'registry-config': { run: registryConfig, help: registryConfigHelp },
  'rootless-cgroups': { run: rootlessCgroups, help: rootlessCgroupsHelp },
};

const usage = `Usage: dockgate <command> [options]

Commands:
  keygen            create a token-signing key and a self-signed certificate
  htpasswd          add a bcrypt user line to an htpasswd file
  registry-config   print a registry's auth.token block that trusts a key
  rootless-cgroups  print the command that delegates cgroups to a rootless sandbox runtime

Run "dockgate <command> --help" for a command's options.
`;

/** Runs the `dockgate` command line; resolves to the exit code. */
export async function runCli(argv: string[], io: CliIo): Promise<number> {
  const [name, ...args] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    io.stdout(usage);
    return name ? 0 : 2;
  }
  const command = COMMANDS[name];
  if (!command) {
    io.stderr(`dockgate: unknown command "${name}"\n\n${usage}`);
    return 2;
  }
  if (args.includes('--help') || args.includes('-h')) {
    io.stdout(command.help);
    return 0;
  }
  try {
    return await command.run(args, io);
  } catch (err) {
    // parseArgs throws TypeErrors with ERR_PARSE_ARGS_* codes for unknown or malformed flags.
    const code = (err as { code?: string }).code ?? '';
    if (err instanceof UsageError || code.startsWith('ERR_PARSE_ARGS')) {
      io.stderr(`dockgate ${name}: ${(err as Error).message}\n\n${command.help}`);
      return 2;
    }
    io.stderr(`dockgate ${name}: ${(err as Error).message}\n`);
    return 1;
  }
}
