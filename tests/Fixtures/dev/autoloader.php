<?php
spl_autoload_register(static function (string $class): void {
});
echo 'autoloader';
