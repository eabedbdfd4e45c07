<?php

declare(strict_types=1);

namespace Kiln\Cli;

use Kiln\Kiln;

/** The `kiln` command: dispatches to serve / stop / reload / status / help. Exit code 2 for usage errors. */
final class Application
{
    public const EXIT_USAGE = 2;

    /**
     * @param resource $stdout
     * @param resource $stderr
     */
    public function __construct(
        private readonly mixed $stdout,
        private readonly mixed $stderr,
    ) {}

    /**
     * @param list<string> $argv as the process got it (argv[0] is the script)
     * @param array<string, string> $env
     */
    public function run(array $argv, array $env, string $cwd): int
    {
        $command = $argv[1] ?? 'help';
        $args = \array_slice($argv, 2);
        if (\in_array($command, Help::COMMANDS, true) && Help::asked($args)) {
            return $this->help($command);
        }
        try {
            return match ($command) {
                'serve' => $this->serve($args, $env, $cwd),
                'stop', 'reload', 'status' => (new ControlCommand($this->stdout, $this->stderr))->run($command, $args, $env, $cwd),
                'help', '--help', '-h' => $this->help(),
                '--version', '-V', 'version' => $this->version(),
                default => throw new UsageException("Unknown command '$command'; commands: serve, stop, reload, status, help"),
            };
        } catch (UsageException $e) {
            if (\is_resource($this->stderr)) {
                fwrite($this->stderr, 'kiln: ' . $e->getMessage() . "\n");
            }
            return self::EXIT_USAGE;
        }
    }

    /**
     * @param list<string> $args
     * @param array<string, string> $env
     */
    private function serve(array $args, array $env, string $cwd): int
    {
        $problem = Requirements::ofThisPhp()->problem();
        if ($problem !== null) {
            fwrite($this->stderr, "kiln: $problem\n");
            return 1;
        }
        return (new ServeCommand($this->stderr))->run($args, $env, $cwd);
    }

    private function version(): int
    {
        fwrite($this->stdout, 'kiln ' . Kiln::VERSION . "\n");
        return 0;
    }

    private function help(?string $command = null): int
    {
        fwrite($this->stdout, $command === null ? Help::all() : Help::of($command));
        return 0;
    }
}
