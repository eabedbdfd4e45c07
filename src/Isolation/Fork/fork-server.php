<?php

declare(strict_types=1);

// A fork server process (see ForkServer): php fork-server.php SOCKET CHILD_CLASS MAX TIME_LIMIT KILL_GRACE
// Started by ForkServerProcess; loads only the Kiln autoloader, so the parent of every fork stays small.
// In a forked child, main() returns CHILD and the request's script is included here, at the global scope.
// An exception that leaves the script is thrown on without this file's frame in its trace (ScriptFrames):
// PHP then reports it, or hands it to the script's exception handler, as if the script were the main one.

require __DIR__ . '/../../bootstrap.php';
// Loaded here, before any fork: autoloading it while a script's exception is in hand could fail in the script's
// place (an autoloader of its own that throws, a script at its memory_limit) and hide the script's exception.
class_exists(Kiln\Isolation\Fork\Internal\ScriptFrames::class);

if (($kilnForkCode = Kiln\Isolation\Fork\ForkServer::main(array_values(array_map('strval', $argv)))) !== Kiln\Isolation\Fork\ForkServer::CHILD) {
    exit($kilnForkCode);
}
unset($kilnForkCode, $argv, $argc);
if (Kiln\Isolation\Fork\ForkServer::childScript() !== null) {
    try {
        require Kiln\Isolation\Fork\ForkServer::childScript();
    } catch (Throwable $kilnForkError) {
        throw Kiln\Isolation\Fork\Internal\ScriptFrames::cut($kilnForkError, __FILE__);
    }
}
