<?php

declare(strict_types=1);

// A fork server process (see ForkServer): php fork-server.php SOCKET CHILD_CLASS MAX TIME_LIMIT KILL_GRACE
// Started by ForkServerProcess; loads only the Kiln autoloader, so the parent of every fork stays small.
// In a forked child, main() returns CHILD and the request's script is included here, at the global scope.

require __DIR__ . '/../../bootstrap.php';

if (($kilnForkCode = Kiln\Isolation\Fork\ForkServer::main(array_values(array_map('strval', $argv)))) !== Kiln\Isolation\Fork\ForkServer::CHILD) {
    exit($kilnForkCode);
}
unset($kilnForkCode, $argv, $argc);
if (Kiln\Isolation\Fork\ForkServer::childScript() !== null) {
    require Kiln\Isolation\Fork\ForkServer::childScript();
}
